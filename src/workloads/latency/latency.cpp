// The latency workload's rules and each side's probe streams.
#include "workloads/latency/latency.hpp"

#include <algorithm>
#include <memory>

#include "util/units.hpp"
#include "workloads/latency/latency_section.hpp"
#include "workloads/latency/phases.hpp"
#include "workloads/latency/probe_datagram.hpp"
#include "workloads/latency/probes.hpp"
#include "workloads/part.hpp"

namespace testio::workloads::latency {
namespace {

using asio::ip::tcp;

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

constexpr std::uint64_t kMaxProbeSize = 65000;       // one UDP datagram over IPv4 or IPv6
constexpr std::size_t kMaxLogged = std::size_t{1} << 20;  // probes one stream keeps (24 MiB at most)

ProbePlan plan_of(const LatencySpec& latency) {
  ProbePlan plan;
  plan.interval_ms = static_cast<double>(latency.interval_us) / 1e3;
  plan.connect_interval_ms = static_cast<double>(latency.connect_interval_us) / 1e3;
  plan.size = latency.probe_size;
  plan.kinds = {latency.udp, latency.tcp, latency.connect};
  return plan;
}

ProbeSettings settings_for(const LatencySpec& latency, ProbeKind kind, const StreamPlace& place) {
  ProbeSettings settings;
  settings.interval_ns = (kind == ProbeKind::connect ? latency.connect_interval_us : latency.interval_us) * 1000;
  settings.size = static_cast<std::size_t>(kind == ProbeKind::connect ? 1 : latency.probe_size);
  settings.test_id = place.test_id;
  settings.number = place.number;
  settings.server = place.server;
  settings.preamble = place.preamble;
  settings.clock_offset_ns = place.clock_offset_ns;
  return settings;
}

void describe(const LatencySpec& latency, report::StartInfo& start) {
  std::string kinds;
  for (ProbeKind kind : kinds_of(latency)) kinds += (kinds.empty() ? "" : ", ") + std::string(name(kind));
  start.manner = "latency probes (" + kinds + ") every " + std::to_string(latency.interval_us / 1000) + " ms";
}

// The client's probes. Owner: the lifecycle (control thread); each log is written by its probe's
// worker and read once the workers stopped.
class ClientProbes final : public TestSide {
 public:
  ClientProbes(const config::Config& config, const spec::TestSpec& spec)
      : latency_(part_of<LatencySpec>(spec)), kinds_(kinds_of(latency_)), phases_(phases_of(config.spec)) {
    for (ProbeKind kind : kinds_) {
      const std::uint64_t every = kind == ProbeKind::connect ? latency_.connect_interval_us : latency_.interval_us;
      const double probes = spec.window_s() * 1e6 / static_cast<double>(every) + 16;
      logs_[static_cast<std::size_t>(kind)] =
          std::make_unique<ProbeLog>(std::min(kMaxLogged, static_cast<std::size_t>(probes)));
    }
  }

  DirectionLayout layout() const override { return {static_cast<std::uint32_t>(kinds_.size()), 0}; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { describe(latency_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    const ProbeKind kind = kinds_[place.index];
    const ProbeSettings settings = settings_for(latency_, kind, place);
    ProbeLog& log = *logs_[static_cast<std::size_t>(kind)];
    if (kind == ProbeKind::udp) return std::make_unique<UdpProber>(place, settings, log);
    if (kind == ProbeKind::tcp) return std::make_unique<TcpProber>(place, settings, log);
    return std::make_unique<ConnectProber>(place, settings, log);
  }

  // Each kind's probes answered in the interval: how many, and their p50 and max round trip; udp's
  // also the p50 one-way delays up and down (the timeline testio plot draws).
  void annotate(stats::IntervalRecord& record) override {
    for (ProbeKind kind : kinds_) {
      const auto k = static_cast<std::size_t>(kind);
      const ProbeLog& log = *logs_[k];
      std::vector<std::uint64_t> round_trips, ups, downs;
      for (const std::size_t end = log.size(); seen_[k] < end; ++seen_[k]) {
        const ProbeRecord& probe = log[seen_[k]];
        if (!probe.answered) continue;
        round_trips.push_back(probe.rtt_ns);
        if (kind != ProbeKind::udp) continue;
        ups.push_back(probe.up_ns);
        downs.push_back(probe.down_ns);
      }
      const DelayFigures figures = delay_figures(round_trips);
      const std::string prefix = name(kind);
      record.figures.emplace_back(prefix + "_count", static_cast<double>(figures.count));
      record.figures.emplace_back(prefix + "_p50_ms", figures.p50_ms);
      record.figures.emplace_back(prefix + "_max_ms", figures.max_ms);
      if (kind != ProbeKind::udp) continue;
      record.figures.emplace_back("udp_up_p50_ms", delay_figures(ups).p50_ms);
      record.figures.emplace_back("udp_down_p50_ms", delay_figures(downs).p50_ms);
    }
  }

  void add_to_report(report::TestReport& report) const override {
    std::array<std::vector<ProbeRecord>, 3> records;
    std::uint64_t dropped = 0;
    for (std::size_t k = 0; k < records.size(); ++k) {
      if (!logs_[k]) continue;
      const ProbeLog& log = *logs_[k];
      records[k].reserve(log.size());
      for (std::size_t i = 0; i < log.size(); ++i) records[k].push_back(log[i]);
      dropped += log.dropped();
    }
    report.sections.push_back(std::make_shared<LatencySection>(plan_of(latency_), phases_, std::move(records), dropped,
                                                               report.start.peer_clock));
  }

 private:
  LatencySpec latency_;
  std::vector<ProbeKind> kinds_;
  std::vector<Phase> phases_;
  std::array<std::unique_ptr<ProbeLog>, 3> logs_;  // by kind: udp, tcp, connect
  std::array<std::size_t, 3> seen_{};              // by kind: the records the intervals have told
};

// The server's answers. Owner: the lifecycle; each stream and its tally belong to its worker.
class ServerAnswers final : public TestSide {
 public:
  explicit ServerAnswers(const spec::TestSpec& spec)
      : latency_(part_of<LatencySpec>(spec)), kinds_(kinds_of(latency_)), streams_(kinds_.size(), nullptr) {}

  DirectionLayout layout() const override { return {static_cast<std::uint32_t>(kinds_.size()), 0}; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override { describe(latency_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    const ProbeKind kind = kinds_[place.index];
    ServerTally& tally = tallies_[static_cast<std::size_t>(kind)];
    std::unique_ptr<engines::StreamTask> stream;
    if (kind == ProbeKind::udp)
      stream = std::make_unique<UdpReflector>(place, settings_for(latency_, kind, place), tally);
    else
      stream = std::make_unique<ProbeEcho>(place, std::max<std::size_t>(latency_.probe_size, 64), tally,
                                           kind == ProbeKind::tcp);
    streams_[place.index] = stream.get();
    return stream;
  }

  std::string route(std::uint32_t slot, tcp::socket socket, engines::Worker& worker) override {
    if (slot >= kinds_.size() || kinds_[slot] == ProbeKind::udp) return "connection " + std::to_string(slot) + " is no TCP probe's";
    auto owned = std::make_shared<tcp::socket>(std::move(socket));
    worker.post([echo = static_cast<ProbeEcho*>(streams_[slot]), owned] { echo->attach(std::move(*owned)); });
    return {};
  }

  std::string route_flow(std::uint32_t slot, asio::ip::udp::socket socket, engines::Worker& worker) override {
    if (slot >= kinds_.size() || kinds_[slot] != ProbeKind::udp) return "flow " + std::to_string(slot) + " is no UDP probe's";
    auto owned = std::make_shared<asio::ip::udp::socket>(std::move(socket));
    worker.post([reflector = static_cast<UdpReflector*>(streams_[slot]), owned] { reflector->attach(std::move(*owned)); });
    return {};
  }

  void add_to_report(report::TestReport& report) const override {
    ServerProbes probes;
    probes.plan = plan_of(latency_);
    probes.udp_answered = tallies_[0].answered;
    probes.udp_up_ns = tallies_[0].up_ns;
    probes.tcp_messages = latency_.probe_size ? tallies_[1].bytes / latency_.probe_size : 0;
    probes.connects = tallies_[2].answered;
    report.sections.push_back(std::make_shared<ServerLatencySection>(std::move(probes)));
  }

 private:
  LatencySpec latency_;
  std::vector<ProbeKind> kinds_;
  std::vector<engines::StreamTask*> streams_;  // by connection; owned by their workers
  std::array<ServerTally, 3> tallies_;         // by kind: udp, tcp, connect
};

class Latency final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    const LatencySpec latency = part_of<LatencySpec>(spec);
    if (!spec.timed() || spec.total_bytes) refuse("latency probes run for a time (-t or the phases), not a count");
    if (latency.interval_us < 1000 || latency.interval_us > 10'000'000)
      refuse("--latency-interval must be from 1 to 10000 ms");
    if (latency.connect_interval_us < latency.interval_us || latency.connect_interval_us > 60'000'000)
      refuse("connect probes go at most as often as the others and at least once a minute");
    if (latency.probe_size < kProbeSize || latency.probe_size > kMaxProbeSize)
      refuse("--latency-size must be from 72 bytes (a probe's header and times) to 65000");
    const std::size_t kinds = kinds_of(latency).size();
    if (kinds == 0) refuse("--latency-kinds must name at least one of udp, tcp, connect");
    if (spec.connections != kinds)
      refuse("a latency workload has one connection per probe kind: " + std::to_string(kinds) + ", not " +
             std::to_string(spec.connections));
    check_no_bulk_options(spec);
  }
  bool takes_setting(std::string_view name) const override { return part_has<LatencySpec>(name); }

  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return std::make_unique<ClientProbes>(config, spec);
  }
  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources&) const override {
    return std::make_unique<ServerAnswers>(spec);
  }
};

}  // namespace

std::vector<ProbeKind> kinds_of(const LatencySpec& latency) {
  std::vector<ProbeKind> kinds;
  if (latency.udp) kinds.push_back(ProbeKind::udp);
  if (latency.tcp) kinds.push_back(ProbeKind::tcp);
  if (latency.connect) kinds.push_back(ProbeKind::connect);
  return kinds;
}

const Workload& workload() {
  static const Latency latency;
  return latency;
}

}  // namespace testio::workloads::latency
