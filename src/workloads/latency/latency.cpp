// Latency under load's options and rules (its probe datagram is latency_wire.cpp's).
//
// --latency: probes beside the load the other options describe, or crusader's sequence of phases
// when they describe none. Either way the command line becomes a composed test: each load a
// workload placed in the window (begins_s, ends_s), the probes a latency workload over all of it.
#include "workloads/latency/latency.hpp"

#include <algorithm>
#include <sstream>

#include "config/config.hpp"
#include "options/given.hpp"
#include "options/option_table.hpp"
#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/udp/udp.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::latency {

namespace {

using util::UsageError;

constexpr const char* kSequence = "idle,download,upload,bidir,idle";
constexpr std::uint32_t kSequenceConnections = 4;  // per direction, as Flent's RRUL runs 4+4
constexpr std::size_t kMaxLoads = 7;                // kMaxWorkloads less the probes' own

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

LatencySpec probes_of(const options::ParsedOptions& args) {
  LatencySpec latency;
  if (auto kinds = options::typed(args, "latency-kinds")) {
    latency.udp = latency.tcp = latency.connect = false;
    for (const std::string& kind : split(*kinds)) {
      if (kind == "udp") latency.udp = true;
      else if (kind == "tcp") latency.tcp = true;
      else if (kind == "connect") latency.connect = true;
      else throw UsageError("--latency-kinds: \"" + util::printable(kind) + "\" is none of udp, tcp, connect");
    }
  }
  if (auto interval = options::typed(args, "latency-interval")) {
    const std::uint64_t ms = std::min<std::uint64_t>(util::parse_count(*interval, "--latency-interval"), 1'000'000);
    latency.interval_us = ms * 1000;  // (the workload's check holds it to 1..10000 ms)
    latency.connect_interval_us = std::max<std::uint64_t>(latency.interval_us * 10, 10'000);
  }
  if (auto size = options::typed(args, "latency-size")) latency.probe_size = util::parse_size(*size, "--latency-size");
  return latency;
}

// The probes' own workload, over the whole window of `test`.
spec::TestSpec probe_part(const spec::TestSpec& test, const LatencySpec& latency) {
  spec::TestSpec part;
  part.workload = "latency";
  part.connections = static_cast<std::uint32_t>(kinds_of(latency).size());
  spec::share_test_wide(test, part);
  set_part(part, latency);
  return part;
}

spec::Direction direction_of(const std::string& phase) {
  if (phase == "download") return spec::Direction::reverse;
  if (phase == "upload") return spec::Direction::forward;
  if (phase == "bidir") return spec::Direction::bidir;
  throw UsageError("--latency-phases: \"" + util::printable(phase) + "\" is none of idle, download, upload, bidir");
}

// Crusader's sequence (or --latency-phases): each load phase a bulk workload of its own, placed
// in the window; the probes over all of it, last.
std::vector<spec::TestSpec> sequence(const spec::TestSpec& load, const std::vector<std::string>& phases, double each_s,
                                     const LatencySpec& latency) {
  std::vector<spec::TestSpec> parts;
  spec::TestSpec window = load;
  window.duration_s = each_s * static_cast<double>(phases.size());
  for (std::size_t k = 0; k < phases.size(); ++k) {
    if (phases[k] == "idle") continue;
    spec::TestSpec part = load;
    spec::share_test_wide(window, part);
    part.direction = direction_of(phases[k]);
    part.begins_s = each_s * static_cast<double>(k);
    part.ends_s = each_s * static_cast<double>(k + 1);
    parts.push_back(std::move(part));
  }
  if (parts.size() > kMaxLoads) throw UsageError("--latency-phases runs at most 7 load phases in one test");
  parts.push_back(probe_part(window, latency));
  return parts;
}

}  // namespace

void add_options(options::OptionTable& table) {
  // clang-format off
  table.add_options("Latency under load")
    ("latency", "Latency probes beside the load the other options describe; with none, the phases idle, "
                "download, upload, bidir, idle (--phase-time each). Reports each phase's probes, RPM and goodput")
    ("latency-kinds", "Probe kinds: udp (round trip and one-way delays), tcp (a kept connection), connect "
                      "(a new connection each)", options::value().default_value("udp,tcp,connect"), "LIST")
    ("latency-interval", "Milliseconds between udp and tcp probes (connect probes: ten times that, at least 10)",
       options::value().default_value("10"), "MS")
    ("latency-size", "Bytes per udp and tcp probe", options::value().default_value("72"), "SIZE")
    ("latency-phases", "The phases in order, each --phase-time long: idle, download, upload, bidir",
       options::value(), "LIST")
    ("phase-time", "Seconds per phase", options::value().default_value("4"), "S")
    ("latency-idle", "Seconds of probes alone before a load the other options give (0: none)",
       options::value().default_value("2"), "S");
  // clang-format on
}

void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  given.latency = args.count("latency") > 0;
  given.latency_options = args.count("latency-kinds") || args.count("latency-interval") || args.count("latency-size") ||
                          args.count("latency-phases") || args.count("phase-time") || args.count("latency-idle");
  if (!given.latency) return;  // (typed without --latency: check_options says so)
  spec::TestSpec& load = config.spec;
  const LatencySpec latency = probes_of(args);
  const bool load_given = given.connections || given.reverse || given.bidir || given.udp || given.rr;
  if (args.count("latency-phases") || !load_given) {
    if (given.time) throw UsageError("-t times a load given beside --latency; the phases take --phase-time each");
    if (given.reverse || given.bidir)
      throw UsageError("--latency-phases gives each phase its direction: drop -R and --bidir");
    if (args.count("latency-idle")) throw UsageError("--latency-idle goes with a load given beside --latency; "
                                                     "the phases say where idle falls");
    const std::string list = options::typed(args, "latency-phases").value_or(kSequence);
    const double each = util::parse_seconds(options::typed(args, "phase-time").value_or("4"), "--phase-time");
    if (!given.connections) load.connections = kSequenceConnections;
    config.spec = spec::composed(sequence(load, split(list), each, latency));
    return;
  }
  // Probes beside the given load, which starts after an idle spell that gives the baseline.
  const double idle = util::parse_seconds(options::typed(args, "latency-idle").value_or("2"), "--latency-idle");
  load.duration_s += idle;
  load.begins_s = idle;
  config.spec = spec::composed({load, probe_part(load, latency)});
}

void check_options(const config::Config& config, const options::GivenOptions& given) {
  if (!given.latency) {
    if (given.latency_options)
      throw UsageError("--latency-kinds, --latency-interval, --latency-size, --latency-phases, --phase-time and "
                       "--latency-idle apply to --latency tests");
    return;
  }
  if (config.role == config::Role::server) throw UsageError("--latency is a client option: a server answers any probes");
  if (config.raw || config.iperf3 || config.mesh)
    throw UsageError("--latency needs a testio server: its probes are answered by testio -s (not --raw, --iperf3 or --mesh)");
  if (given.bytes || given.num || given.transfers || given.urls)
    throw UsageError("--latency runs for a time: -n, --num, --transfers and URLs count their own end");
  if (given.omit) throw UsageError("-O does not go with --latency: its idle phase comes before the load instead");
}

std::vector<ProbeKind> kinds_of(const LatencySpec& latency) {
  std::vector<ProbeKind> kinds;
  if (latency.udp) kinds.push_back(ProbeKind::udp);
  if (latency.tcp) kinds.push_back(ProbeKind::tcp);
  if (latency.connect) kinds.push_back(ProbeKind::connect);
  return kinds;
}

namespace {

[[noreturn]] void refuse_latency(const std::string& sentence) { throw spec::SpecError(sentence); }

constexpr std::uint64_t kMaxProbeSize = 65000;  // one UDP datagram over IPv4 or IPv6

class Latency final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    const LatencySpec latency = part_of<LatencySpec>(spec);
    if (!spec.timed() || spec.total_bytes) refuse_latency("latency probes run for a time (-t or the phases), not a count");
    if (latency.interval_us < 1000 || latency.interval_us > 10'000'000)
      refuse_latency("--latency-interval must be from 1 to 10000 ms");
    if (latency.connect_interval_us < latency.interval_us || latency.connect_interval_us > 60'000'000)
      refuse_latency("connect probes go at most as often as the others and at least once a minute");
    if (latency.probe_size < kProbeSize || latency.probe_size > kMaxProbeSize)
      refuse_latency("--latency-size must be from 72 bytes (a probe's header and times) to 65000");
    const std::size_t kinds = kinds_of(latency).size();
    if (kinds == 0) refuse_latency("--latency-kinds must name at least one of udp, tcp, connect");
    if (spec.connections != kinds)
      refuse_latency("a latency workload has one connection per probe kind: " + std::to_string(kinds) + ", not " +
             std::to_string(spec.connections));
    check_no_bulk_options(spec);
  }
  bool takes_setting(std::string_view name) const override { return part_has<LatencySpec>(name); }

  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return client_probes(config, spec);
  }
  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources& resources) const override {
    if (part_of<LatencySpec>(spec).udp && !resources.udp_port) throw std::runtime_error(no_udp_port_refusal());
    return server_answers(spec);
  }
};

}  // namespace

const Workload& workload() {
  static const Latency latency;
  return latency;
}

}  // namespace testio::workloads::latency
