// The listening side: one port for control and data connections, told apart by their preamble.
// Up to --max-tests tests at once, each with its own workers and its own report; --queue more
// waiting for a slot; a clear "busy", naming the option, beyond that.
// Owner: the main thread's io_context; every member is touched only there.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "lifecycle/foreign_clients.hpp"
#include "lifecycle/log_limiter.hpp"
#include "lifecycle/slots.hpp"
#include "metrics/http_listener.hpp"
#include "metrics/server_metrics.hpp"
#include "net/access_list.hpp"
#include "net/asio_fwd.hpp"
#include "protocols/testio/door.hpp"
#include "server/handshakes.hpp"
#include "server/udp_door.hpp"

namespace testio::server {

using lifecycle::ForeignClients;
using lifecycle::LogLimiter;
using lifecycle::TestSlots;

class Server {
 public:
  // Opens the listening socket and loads the key; throws std::runtime_error with one sentence.
  // `foreign` (may be null) serves the connections that do not begin with testio's magic.
  // Every test's report goes through `metrics` (to the reporter it wraps), which counts it.
  Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
         ForeignClients* foreign = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Accepts until stop() (or, with -1, until one test ends).
  net::Awaitable<void> serve();
  void stop() noexcept;
  // 0 unless a -1 test failed.
  int exit_code() const noexcept { return exit_code_; }
  // The port it listens on (-p 0: the one the kernel chose).
  std::uint16_t port() const;
  // /metrics: the counters, with what only the server knows now.
  std::string metrics_text() const;

 private:
  // Whether a new connection from `peer` may go on: refused when too many are in their
  // handshake in all; when its address is at its allowance, the address's oldest idle one is closed.
  bool admit_at_the_door(net::TcpSocket& socket, const net::TcpEndpoint& peer);
  // The refusal as an error frame, sent without waiting, before the socket closes.
  static void answer_at_the_door(net::TcpSocket& socket, const std::string& refusal) noexcept;
  net::Awaitable<void> handle_connection(net::TcpSocket socket);
  // A connection of the foreign peer's, with what was read of it (`first`); counts its test.
  net::Awaitable<void> serve_foreign(net::TcpSocket socket, std::array<unsigned char, 4> first,
                                     std::chrono::steady_clock::duration handshake_limit);

  struct BoundPort;  // the listening socket and its UDP twin (server.cpp)
  static BoundPort bind_port(asio::io_context& io, const config::Config& config);
  Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
         ForeignClients* foreign, BoundPort port);

  asio::io_context& io_;
  const config::Config& config_;
  metrics::ServerMetrics& reporter_;  // the reporter every test reports to, counting as it goes
  std::unique_ptr<net::TcpAcceptor> acceptor_;  // a pointer keeps Asio out of this header
  net::AccessList allowed_;
  ForeignClients* foreign_;
  TestSlots slots_;                 // tests running or being set up, of either protocol, and the queue
  Handshakes handshakes_;           // connections that have not yet said who they are
  LogLimiter log_;                  // warnings a flood would repeat
  control::TestioDoor door_;        // connections that began with testio's preamble, and their tests
  UdpDoor udp_door_;                // the same port's UDP: each flow's hello
  int exit_code_ = 0;
};

// --metrics ADDRESS: /metrics from `server`, served on `io` by `endpoint` (emplaced here). Throws
// std::runtime_error when it cannot listen.
void open_metrics_endpoint(asio::io_context& io, const std::string& address, Server& server,
                           std::optional<metrics::HttpListener>& endpoint);

// Runs `testio -s` (and, with --metrics, its /metrics endpoint) until a signal or, with -1, one
// test. Returns the exit code.
int run_server(const config::Config& config, metrics::ServerMetrics& metrics, ForeignClients* foreign = nullptr);

}  // namespace testio::server
