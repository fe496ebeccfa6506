// Metrics: the server's /metrics endpoint and the client's textfile for node_exporter.
#include "cli/groups.hpp"

#include "metrics/http_listener.hpp"
#include "workloads/workload.hpp"

namespace testio::cli {

using util::UsageError;

void add_metrics_options(OptionTable& options) {
  // clang-format off
  options.add_options("Metrics")
    ("metrics", "Server: serve Prometheus metrics at http://ADDRESS:PORT/metrics (docs/metrics.md)",
       value(), "ADDRESS:PORT")
    ("prometheus", "Client: write the test's result for node_exporter's textfile collector to FILE "
                   "(a temporary file renamed over it)", value(), "FILE");
  // clang-format on
}

void fill_metrics(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  if (auto listen = typed(args, "metrics")) config.metrics_listen = *listen;
  if (auto file = typed(args, "prometheus")) config.prometheus_file = *file;
  given.metrics = !config.metrics_listen.empty();
  given.prometheus = !config.prometheus_file.empty();
}

void check_metrics(const config::Config& config, const GivenOptions& given) {
  const bool server = config.role == config::Role::server;
  if (given.metrics) {
    if (!server) throw UsageError("--metrics is a server option; a client writes its result with --prometheus FILE");
    if (!metrics::parse_listen_address(config.metrics_listen))
      throw UsageError("--metrics '" + config.metrics_listen + "' is not ADDRESS:PORT (e.g. 127.0.0.1:9200 or [::1]:9200)");
  }
  if (given.prometheus) {
    if (server) throw UsageError("--prometheus is a client option; a server serves its counters with --metrics");
    const std::string& file = config.prometheus_file;
    if (file.back() == '/') throw UsageError("--prometheus '" + file + "' names a directory; give a file name");
    const std::size_t slash = file.rfind('/');
    try {
      workloads::check_writable_directory(slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash),
                                          "--prometheus's directory");
    } catch (const std::runtime_error& error) {
      throw UsageError(error.what());
    }
  }
}

}  // namespace testio::cli
