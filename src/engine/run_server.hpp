// The server's side of one test: the data connections it gathers and the lifecycle that runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "control/channel.hpp"
#include "control/protocol.hpp"
#include "engine/completion_latch.hpp"
#include "report/reporter.hpp"
#include "util/mapped_file.hpp"

namespace testio::engine {

// A test the server has accepted. Owner: the control thread (the acceptor attaches data
// connections to it; the lifecycle below takes them over once all have arrived).
class ServerTest {
 public:
  // `served_file`: what --transfers download (nullptr: generated data); it outlives the test.
  ServerTest(asio::any_io_executor executor, std::uint64_t id, const control::TestRequest& request,
             const util::MappedFile* served_file = nullptr);

  std::uint64_t id() const noexcept { return id_; }
  const control::TestRequest& request() const noexcept { return request_; }

  // Gives stream `index` its socket. An empty string when taken; otherwise why it was refused.
  std::string attach(std::uint32_t index, asio::ip::tcp::socket socket);
  void note_tests_beside(std::uint32_t count) noexcept { tests_beside_ = std::max(tests_beside_, count); }
  std::uint32_t tests_beside() const noexcept { return tests_beside_; }
  const util::MappedFile* served_file() const noexcept { return served_file_; }
  // -A: the server's own CPU list if it has one, else the client's request.
  void pin_to(std::vector<std::uint32_t> cpus) { cpus_ = std::move(cpus); }
  const std::vector<std::uint32_t>& cpus() const noexcept { return cpus_; }

  // --transfers: connections keep arriving while the test runs; the running lifecycle takes each
  // through the router it sets (and clears before its workers stop).
  using Router = std::function<std::string(std::uint32_t index, asio::ip::tcp::socket socket)>;
  void route_to(Router router) { router_ = std::move(router); }

 private:
  friend asio::awaitable<bool> run_server_test(control::ControlChannel&, ServerTest&, report::Reporter&);
  std::uint64_t id_;
  control::TestRequest request_;
  std::vector<std::optional<asio::ip::tcp::socket>> sockets_;
  std::shared_ptr<CompletionLatch> all_arrived_;
  bool gathering_ = true;
  std::uint32_t tests_beside_ = 0;
  const util::MappedFile* served_file_;
  Router router_;
  std::vector<std::uint32_t> cpus_;
};

// Runs an accepted test to its end and reports it. Returns true when every stream ended
// cleanly; throws when the client breaks the protocol or goes away.
asio::awaitable<bool> run_server_test(control::ControlChannel& control, ServerTest& test,
                                      report::Reporter& reporter);
// The same for a --transfers test, where the server sends and connections come and go.
asio::awaitable<bool> run_server_transfers(control::ControlChannel& control, ServerTest& test,
                                           report::Reporter& reporter);

}  // namespace testio::engine
