#include "lifecycle/client_signals.hpp"

#include <csignal>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>

#include "util/log.hpp"

namespace testio::lifecycle {

std::string interruption_text(int signal) {
  return signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM";
}

int run_client_test(const ClientRun& test, report::Reporter& reporter, const DescribeFailure& describe) {
  asio::io_context io(1);
  int exit_code = 1;
  Interruption interruption;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const asio::error_code&, int)> on_signal = [&](const asio::error_code& error, int signal) {
    if (error) return;
    if (interruption.signal == 0 && interruption.end_window) {
      interruption.signal = signal;
      spdlog::warn("{}: ending the test early", signal == SIGINT ? "SIGINT" : "SIGTERM");
      interruption.end_window();
      signals.async_wait(on_signal);
      return;
    }
    spdlog::error("{}: stopped", signal == SIGINT ? "SIGINT" : "SIGTERM");
    exit_code = 1;
    io.stop();
  };
  signals.async_wait(on_signal);
  asio::co_spawn(io, test(interruption), [&](std::exception_ptr failure, int code) {
    signals.cancel();
    if (!failure) {
      exit_code = code;
      return;
    }
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      std::string message = describe(error);
      spdlog::error("{}", message);
      reporter.error(message);
    }
  });
  io.run();
  return exit_code;
}

}  // namespace testio::lifecycle
