#include "cli/exporter_options.hpp"

#include <cstring>
#include <vector>

#include "cli/groups.hpp"
#include "metrics/listen_address.hpp"
#include "util/spawn.hpp"

namespace testio::cli {

using util::UsageError;

bool is_exporter_command(int argc, const char* const* argv) {
  return argc >= 2 && std::strcmp(argv[1], "exporter") == 0;
}

OptionTable exporter_options() {
  OptionTable options("testio exporter",
                           "testio exporter: runs a test for each Prometheus probe and answers with its metrics.\n"
                           "  testio exporter --listen 127.0.0.1:9201\n"
                           "  curl 'http://127.0.0.1:9201/probe?target=server:5201&connections=8&time=5'");
  // clang-format off
  options.add_options("Exporter")
    ("listen", "Serve /probe and /metrics at ADDRESS:PORT", value().default_value("127.0.0.1:9201"),
       "ADDRESS:PORT")
    ("max-probes", "Probes that may run at once; beyond them a probe answers testio_up 0",
       value().default_value("1"), "K")
    ("max-probe-time", "The longest time= a probe may ask for", value().default_value("30"), "SECONDS")
    ("max-probe-connections", "The most connections= a probe may ask for",
       value().default_value("128"), "N")
    ("v,verbose", "A line per probe on stderr")
    ("h,help", "Print this help and exit");
  // clang-format on
  return options;
}

namespace {

void fill_exporter(const ParsedOptions& args, config::ExporterConfig& config) {
  config.listen = args.value("listen");
  if (!metrics::is_listen_address(config.listen))
    throw UsageError("--listen '" + config.listen + "' is not ADDRESS:PORT (e.g. 127.0.0.1:9201 or [::1]:9201)");
  config.max_probes = parse_u32(args.value("max-probes"), "--max-probes");
  if (config.max_probes < 1 || config.max_probes > 64) throw UsageError("--max-probes must be between 1 and 64");
  config.max_probe_time_s = util::parse_seconds(args.value("max-probe-time"), "--max-probe-time");
  if (config.max_probe_time_s < 1 || config.max_probe_time_s > 3600)
    throw UsageError("--max-probe-time must be between 1 and 3600 seconds");
  config.max_connections = parse_u32(args.value("max-probe-connections"), "--max-probe-connections");
  if (config.max_connections < 1 || config.max_connections > 4096)
    throw UsageError("--max-probe-connections must be between 1 and 4096");
  config.verbosity = args.count("verbose") ? 1 : 0;
}

}  // namespace

ParsedExporterCommandLine parse_exporter_command_line(int argc, const char* const* argv) {
  ParsedExporterCommandLine parsed;
  OptionTable options = exporter_options();
  // The parse sees "testio exporter" as the program's name.
  std::vector<std::string> rest{"testio exporter"};
  for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
  ParsedOptions args = options.parse(rest);
  if (!args.unmatched().empty())
    throw UsageError("testio exporter takes no argument '" + args.unmatched().front() + "' (see testio exporter --help)");
  if (args.count("help")) {
    parsed.action = ParsedExporterCommandLine::Action::help;
    parsed.help_text = options.help({"Exporter"});
    return parsed;
  }
  fill_exporter(args, parsed.config);
  parsed.config.binary = util::own_binary();
  return parsed;
}

}  // namespace testio::cli
