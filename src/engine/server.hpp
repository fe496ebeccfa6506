// The listening side: one port for control and data connections, told apart by their preamble;
// one test at a time, a clear "busy" for anyone else. Owner: the main thread's io_context.
#pragma once

#include <memory>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "engine/run_server.hpp"

namespace testio::engine {

class Server {
 public:
  // Opens the listening socket; throws std::runtime_error with one sentence if it cannot.
  Server(asio::io_context& io, const config::Config& config, report::Reporter& reporter);

  // Accepts until stop() (or, with -1, until one test ends).
  asio::awaitable<void> serve();
  void stop() noexcept;
  // 0 unless a -1 test failed.
  int exit_code() const noexcept { return exit_code_; }
  unsigned short port() const noexcept { return acceptor_.local_endpoint().port(); }

 private:
  asio::awaitable<void> handle_connection(asio::ip::tcp::socket socket);
  asio::awaitable<void> handle_control(asio::ip::tcp::socket socket);
  void handle_data(asio::ip::tcp::socket socket, const control::Preamble& preamble);
  std::uint64_t new_test_id();

  asio::io_context& io_;
  const config::Config& config_;
  report::Reporter& reporter_;
  asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<ServerTest> active_test_;
  bool test_slot_taken_ = false;
  int exit_code_ = 0;
};

// Runs `testio -s` until a signal or, with -1, one test. Returns the exit code.
int run_server(const config::Config& config, report::Reporter& reporter);

}  // namespace testio::engine
