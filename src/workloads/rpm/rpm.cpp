// --rpm's options and rules: the test against the HTTP server -c names (a large object, or the
// /.well-known/nq configuration that names its URLs, read in rpm_wire.cpp). Its peer is any
// HTTP server, so there is no server side; the client's is in rpm_streams.cpp.
#include "workloads/rpm/rpm.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rpm {

using util::UsageError;

using util::UsageError;

void add_options(options::OptionTable& table) {
  // clang-format off
  table.add_options("Responsiveness (RPM)")
    ("rpm", "RPM against the HTTP server -c names (a large object, or its /.well-known/nq): HTTP/2 load "
            "connections added until stable, probes on new and on load connections (docs/latency.md)")
    ("rpm-small", "The small object the probes GET", options::value(), "URL")
    ("rpm-upload", "Where the upload load PUTs its bodies (none: downloads only)", options::value(), "URL")
    ("rpm-time", "Seconds each direction runs at most, stable or not", options::value().default_value("20"), "S")
    ("rpm-probes", "Probe pairs a second (1 to 100)", options::value().default_value("20"), "N");
  // clang-format on
}

void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  given.rpm = args.count("rpm") > 0;
  given.rpm_options = args.count("rpm-small") || args.count("rpm-upload") || args.count("rpm-time") ||
                      args.count("rpm-probes");
  if (!given.rpm) return;  // (typed without --rpm: check_options says so)
  spec::TestSpec& spec = config.spec;
  spec.workload = "rpm";
  spec.connections = 1;
  RpmSpec rpm;
  for (auto [option, url] : {std::pair{"rpm-small", &rpm.small_url}, std::pair{"rpm-upload", &rpm.upload_url}})
    if (auto typed = options::typed(args, option)) {
      if (std::string problem = http::url_problem(*typed); !problem.empty())
        throw UsageError(std::string("--") + option + ": " + problem);
      *url = *typed;
    }
  if (auto seconds = options::typed(args, "rpm-time")) rpm.max_seconds = util::parse_count(*seconds, "--rpm-time");
  if (auto probes = options::typed(args, "rpm-probes")) rpm.probes_per_second = util::parse_count(*probes, "--rpm-probes");
  set_part(spec, rpm);
}

void check_options(const config::Config& config, const options::GivenOptions& given) {
  if (!given.rpm) {
    if (given.rpm_options) throw UsageError("--rpm-small, --rpm-upload, --rpm-time and --rpm-probes apply to --rpm");
    return;
  }
  if (config.urls.size() != 1)
    throw UsageError("--rpm measures against one HTTP server: -c https://HOST/large-object (or its /.well-known/nq)");
  if (!is_nq_config_url(config.urls.front()) && part_of<RpmSpec>(config.spec).small_url.empty())
    throw UsageError("--rpm needs a small object to probe with: --rpm-small URL (or -c a /.well-known/nq URL)");
  if (given.connections || given.transfers || given.latency)
    throw UsageError("--rpm chooses its own load connections: drop N, --transfers and --latency");
}

namespace {

[[noreturn]] void refuse_rpm(const std::string& sentence) { throw spec::SpecError(sentence); }

class Rpm final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    const RpmSpec rpm = part_of<RpmSpec>(spec);
    if (rpm.max_seconds < 5 || rpm.max_seconds > 600) refuse_rpm("--rpm-time must be from 5 to 600 seconds");
    if (rpm.probes_per_second < 1 || rpm.probes_per_second > 100) refuse_rpm("--rpm-probes must be from 1 to 100 a second");
    if (rpm.max_connections < 1 || rpm.max_connections > 16) refuse_rpm("the load takes 1 to 16 connections");
    if (spec.connections != 1) refuse_rpm("--rpm chooses its own connections: drop N");
    check_no_bulk_options(spec);
  }
  std::string extent(const spec::TestSpec& spec) const override {
    return "until stable, at most " + std::to_string(part_of<RpmSpec>(spec).max_seconds) + " s a direction";
  }
  bool takes_setting(std::string_view name) const override { return part_has<RpmSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return rpm_side(config, spec);
  }
  std::unique_ptr<TestSide> server(const spec::TestSpec&, const ServerResources&) const override {
    throw std::runtime_error("--rpm runs against an HTTP server, not testio -s");
  }
};

}  // namespace

const Workload& workload() {
  static const Rpm rpm;
  return rpm;
}

}  // namespace testio::workloads::rpm
