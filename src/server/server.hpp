// The listening side: one port for control and data connections, told apart by their preamble.
// Up to --max-tests tests at once, each with its own workers and its own report; --queue more
// waiting for a slot; a clear "busy", naming the option, beyond that.
// Owner: the main thread's io_context; every member is touched only there.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "metrics/http_listener.hpp"
#include "metrics/server_metrics.hpp"
#include "lifecycle/foreign_clients.hpp"
#include "server/handshakes.hpp"
#include "lifecycle/log_limiter.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "lifecycle/slots.hpp"
#include "server/udp_door.hpp"
#include "util/mapped_file.hpp"
#include "net/access_list.hpp"
#include "protocols/testio/channel.hpp"
#include "protocols/testio/protocol.hpp"

namespace testio::server {

using lifecycle::ForeignClients;
using lifecycle::LogLimiter;
using lifecycle::ServerTest;
using lifecycle::TestSlots;

class Server {
 public:
  // Opens the listening socket and loads the key; throws std::runtime_error with one sentence.
  // `foreign` (may be null) serves the connections that do not begin with testio's magic.
  // Every test's report goes through `metrics` (to the reporter it wraps), which counts it.
  Server(asio::io_context& io, const config::Config& config, metrics::ServerMetrics& metrics,
         ForeignClients* foreign = nullptr);

  // Accepts until stop() (or, with -1, until one test ends).
  asio::awaitable<void> serve();
  void stop() noexcept;
  // 0 unless a -1 test failed.
  int exit_code() const noexcept { return exit_code_; }
  // The port it listens on (-p 0: the one the kernel chose).
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // /metrics: the counters, with what only the server knows now.
  std::string metrics_text() const;

 private:
  // Whether a new connection from `peer` may go on: refused when too many are in their
  // handshake in all; when its address is at its allowance, the address's oldest idle one is closed.
  bool admit_at_the_door(asio::ip::tcp::socket& socket, const asio::ip::tcp::endpoint& peer);
  // The refusal as an error frame, sent without waiting, before the socket closes.
  static void answer_at_the_door(asio::ip::tcp::socket& socket, const std::string& refusal) noexcept;
  asio::awaitable<void> handle_connection(asio::ip::tcp::socket socket);
  // A connection of the foreign peer's, with what was read of it (`first`); counts its test.
  asio::awaitable<void> serve_foreign(asio::ip::tcp::socket socket, std::array<unsigned char, 4> first,
                                      std::chrono::steady_clock::duration handshake_limit);
  void handle_data(asio::ip::tcp::socket socket, const control::Preamble& preamble);

  // A testio client's test (server_control.cpp) ...
  // ... counted against its address's cap from its request to its end.
  class PeerTests {
   public:
    PeerTests(Server& server, asio::ip::address peer)
        : counts_(server.tests_per_peer_), alive_(server.alive_), peer_(std::move(peer)) {
      ++counts_[peer_];
    }
    ~PeerTests() {
      if (alive_.expired()) return;  // at the server's exit, a test's frame goes after it
      if (--counts_[peer_] == 0) counts_.erase(peer_);
    }
    PeerTests(const PeerTests&) = delete;
    PeerTests& operator=(const PeerTests&) = delete;

   private:
    std::map<asio::ip::address, std::uint32_t>& counts_;
    std::weak_ptr<bool> alive_;
    asio::ip::address peer_;
  };
  // ... once its request passed its caps and it has a slot.
  struct Admission {
    control::TestRequest request;
    std::uint64_t arrived_ns = 0;  // when the request arrived (CLOCK_REALTIME), for the clocks' offset
    asio::ip::address peer;
    std::uint64_t connections = 0;
    std::unique_ptr<metrics::ServedTestReport> report;  // its own, numbered
    std::string who;                                    // "test #7 from 192.0.2.5:41234", for the log
    std::unique_ptr<PeerTests> counted;
    std::unique_ptr<TestSlots::Held> slot;  // from when it is granted
  };
  asio::awaitable<void> handle_control(asio::ip::tcp::socket socket);
  // The request, its caps and its slot (after a wait in the queue); nothing when it was refused,
  // which the client has been told and the log says.
  asio::awaitable<std::optional<Admission>> admit_request(control::ControlChannel& control, const std::string& peer);
  // The hello, the request, its key and its rules; throws what the client is to be told.
  asio::awaitable<control::TestRequest> read_request(control::ControlChannel& control);
  // Which cap a request from `peer` of `connections` meets, in a sentence naming the option; empty: none.
  std::string cap_refusal(const asio::ip::address& peer, std::uint64_t connections) const;
  // Why a test that may not wait for a slot is turned away.
  std::string busy_refusal() const;
  // A slot at once, or after a wait in the queue; empty when held, else the sentence for the client.
  asio::awaitable<std::string> take_slot(control::ControlChannel& control, Admission& admission);
  std::chrono::steady_clock::duration stall_limit() const;
  // A checked request becomes a test under way: its workload's server side (which may refuse it),
  // an id, and an entry data connections can find.
  std::shared_ptr<ServerTest> admit(control::TestRequest request, const asio::ip::address& peer,
                                    const asio::ip::address& local);
  std::uint64_t new_test_id();
  // Every running test remembers the most tests it has seen beside it.
  void note_concurrency() noexcept;

  asio::io_context& io_;
  const config::Config& config_;
  metrics::ServerMetrics& reporter_;  // the reporter every test reports to, counting as it goes
  asio::ip::tcp::acceptor acceptor_;
  net::AccessList allowed_;
  std::optional<std::string> key_;
  std::optional<util::MappedFile> served_file_;  // -F: what --transfers download
  std::map<std::uint64_t, std::shared_ptr<ServerTest>> tests_;
  ForeignClients* foreign_;
  TestSlots slots_;                 // tests running or being set up, of either protocol, and the queue
  std::map<asio::ip::address, std::uint32_t> tests_per_peer_;  // testio tests running or waiting, by address
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // what a test's frame checks as it goes
  Handshakes handshakes_;           // connections that have not yet said who they are
  LogLimiter log_;                  // warnings a flood would repeat
  UdpDoor udp_door_;                // the same port's UDP: each flow's hello
  int exit_code_ = 0;
};

// The rules a request's test must keep here: every rule of its workload and this server's caps
// (workloads::check). Throws control::ProtocolError("invalid test request: ...").
void check_request(const spec::TestSpec& spec, const spec::Limits& limits);

// --metrics ADDRESS: /metrics from `server`, served on `io` by `endpoint` (emplaced here). Throws
// std::runtime_error when it cannot listen.
void open_metrics_endpoint(asio::io_context& io, const std::string& address, Server& server,
                           std::optional<metrics::HttpListener>& endpoint);

// Runs `testio -s` (and, with --metrics, its /metrics endpoint) until a signal or, with -1, one
// test. Returns the exit code.
int run_server(const config::Config& config, metrics::ServerMetrics& metrics, ForeignClients* foreign = nullptr);

}  // namespace testio::server
