// testio: parse, validate, dispatch. No logic of its own.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "cli/exporter_options.hpp"
#include "cli/options.hpp"
#include "cli/python_command.hpp"
#include "mesh/rank.hpp"
#include "metrics/exporter.hpp"
#include "metrics/server_metrics.hpp"
#include "metrics/textfile_reporter.hpp"
#include "lifecycle/client_lifecycle.hpp"
#include "protocols/plain/raw.hpp"
#include "server/server.hpp"
#include "protocols/http/client_peer.hpp"
#include "protocols/iperf3/client_peer.hpp"
#include "protocols/iperf3/server_session.hpp"
#include "protocols/plain/client_peer.hpp"
#include "protocols/testio/client_peer.hpp"
#include "report/reporter.hpp"
#include "util/daemon.hpp"
#include "util/descriptors.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/units.hpp"

namespace {
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

// `testio exporter ...`: its own options, its own loop.
int run_exporter(int argc, char** argv) {
  testio::cli::ParsedExporterCommandLine parsed;
  try {
    parsed = testio::cli::parse_exporter_command_line(argc, argv);
  } catch (const testio::util::UsageError& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitUsage;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
  if (parsed.action == testio::cli::ParsedExporterCommandLine::Action::help) {
    std::cout << parsed.help_text;
    return 0;
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    testio::util::setup_logging(std::max(1, parsed.config.verbosity), "");
    return testio::metrics::run_exporter(parsed.config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
}

// The client's peer, by the protocol `config` names: a stock iperf3 server (--iperf3), a plain TCP
// peer (--raw), HTTP servers (-c URL, --urls), or a testio server.
testio::lifecycle::PeerMaker peer_maker(const testio::config::Config& config, std::ostream& out) {
  if (config.iperf3) return [&config] { return testio::iperf3::iperf3_peer(config); };
  if (config.raw) return [&config, &out] { return testio::plain::plain_tcp_peer(config, out); };
  if (!config.urls.empty()) return [&config] { return testio::http::http_peer(config); };
  return [&config] { return testio::control::testio_peer(config); };
}

// The test, with its report through `reporter`; a server's tests each make their own with
// `options`, counted by its metrics.
int run(const testio::config::Config& config, testio::report::Reporter& reporter, std::ostream& out,
        const testio::report::ReporterOptions& options) {
  const bool server = config.role == testio::config::Role::server;
  if (config.mesh) return testio::mesh::run_mesh(config, testio::util::own_binary());
  if (!server) return testio::lifecycle::run_client(config, reporter, peer_maker(config, out));
  testio::metrics::ServerMetrics metrics(
      [&](const testio::report::ReporterOptions& test) { return testio::report::make_reporter(config.output, out, test); },
      options);
  // The server's peers beside testio's own clients: plain senders (--raw: every connection), or
  // stock iperf3 clients, which share the port and are told apart by their cookie.
  std::unique_ptr<testio::lifecycle::ForeignClients> peers =
      config.raw ? testio::plain::raw_clients(config, out, metrics)
                 : std::make_unique<testio::iperf3::Iperf3Clients>(config, metrics);
  return testio::server::run_server(config, metrics, peers.get());
}

// How the report reads, from the options that shape it.
testio::report::ReporterOptions reporter_options(const testio::config::Config& config) {
  testio::report::ReporterOptions options;
  options.verbose = config.verbosity > 0;
  options.unit = config.unit;
  options.stamps = {config.timestamp_format, config.title, config.flush_lines};
  options.title = config.title;
  options.extra_data = config.extra_data;
  options.server_output = config.server_output && config.role != testio::config::Role::server;
  options.stream_full_document = config.stream_full_document;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  if (testio::cli::is_exporter_command(argc, argv)) return run_exporter(argc, argv);
  if (std::string package = testio::cli::python_command_package(argc, argv); !package.empty())
    return testio::cli::run_python_command(package, argc, argv);
  using testio::cli::ParsedCommandLine;
  ParsedCommandLine parsed;
  try {
    parsed = testio::cli::parse_command_line(argc, argv);
  } catch (const testio::util::UsageError& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitUsage;
  }
  if (parsed.action == ParsedCommandLine::Action::help) {
    std::cout << parsed.help_text;
    return 0;
  }
  if (parsed.action == ParsedCommandLine::Action::check) {
    std::cout << "testio: the options are valid\n";
    return 0;
  }
  if (parsed.action == ParsedCommandLine::Action::version) {
    std::cout << "testio " << TESTIO_VERSION << "\n";
    return 0;
  }

  const testio::config::Config& config = parsed.config;
  const bool server = config.role == testio::config::Role::server;
  try {
    if (config.daemon) testio::util::detach();  // before any thread: only the calling one survives fork()
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
  // The report goes to stdout, or with the diagnostics to --logfile.
  std::ofstream logfile;
  if (!config.logfile.empty()) {
    logfile.open(config.logfile, std::ios::app);
    if (!logfile) {
      std::fprintf(stderr, "testio: cannot open log file %s: %s\n", config.logfile.c_str(), std::strerror(errno));
      return kExitRuntime;
    }
  }
  std::ostream& out = config.logfile.empty() ? std::cout : logfile;
  std::optional<testio::util::PidFile> pidfile;
  try {
    // The server's status lines (listening, each test) are its main output on stderr.
    testio::util::setup_logging(server ? std::max(1, config.verbosity) : config.verbosity, config.logfile);
    // The pid file comes last: a script that waits for it may then read the log file, which exists.
    if (!config.pidfile.empty()) pidfile.emplace(config.pidfile);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
  const testio::report::ReporterOptions options = reporter_options(config);
  std::unique_ptr<testio::report::Reporter> reporter = testio::report::make_reporter(config.output, out, options);
  // --prometheus: the same events, and the file once the exit code is known.
  std::optional<testio::metrics::TextfileReporter> textfile;
  if (!config.prometheus_file.empty()) textfile.emplace(*reporter, config.prometheus_file);
  testio::report::Reporter& reporting = textfile ? static_cast<testio::report::Reporter&>(*textfile) : *reporter;

  // A peer that vanishes must surface as EPIPE on the write, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Thousands of connections need as many descriptors; the soft limit is often far below the hard.
  testio::util::raise_descriptor_limit();
  int exit_code = kExitRuntime;
  try {
    exit_code = run(config, reporting, out, options);
  } catch (const std::exception& error) {
    testio::util::log_error("{}", error.what());
    reporting.error(error.what());
  }
  if (textfile && !textfile->finish(exit_code)) return kExitRuntime;
  return exit_code;
}
