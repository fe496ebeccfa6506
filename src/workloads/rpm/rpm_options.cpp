// --rpm: responsiveness against the HTTP server -c names (a large object, or /.well-known/nq).
#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/rpm/nq_config.hpp"
#include "workloads/rpm/rpm.hpp"

namespace testio::workloads::rpm {

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

}  // namespace testio::workloads::rpm
