// testio: parse, validate, dispatch. No logic of its own.
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/options.hpp"
#include "engine/run_client.hpp"
#include "engine/server.hpp"
#include "util/logging.hpp"
#include "util/units.hpp"

namespace {
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;
}  // namespace

int main(int argc, char** argv) {
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
  if (parsed.action == ParsedCommandLine::Action::version) {
    std::cout << "testio " << TESTIO_VERSION << "\n";
    return 0;
  }

  const testio::config::Config& config = parsed.config;
  const bool server = config.role == testio::config::Role::server;
  // The server's status lines (listening, each test) are its main output on stderr.
  testio::util::setup_logging(server ? std::max(1, config.verbosity) : config.verbosity);
  // A peer that vanishes must surface as EPIPE on the write, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return server ? testio::engine::run_server(config) : testio::engine::run_client(config);
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
    return kExitRuntime;
  }
}
