// testio's door on the server: what a connection that began with testio's preamble becomes. A
// control connection's request is read, keyed, checked against the server's caps, queued for a
// slot, and run as a test (ServerTest) with its own numbered report; a data connection joins the
// test its preamble names. The server hands connections in (server/server.cpp reads the preamble
// under its handshake limit) and asks the door about the tests it runs: the UDP door's lookups,
// the handshake allowance of an address, /metrics's live bytes.
// Owner: the server's io_context thread; every member is touched only there.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "config/config.hpp"
#include "lifecycle/log_limiter.hpp"
#include "lifecycle/slots.hpp"
#include "metrics/server_metrics.hpp"
#include "net/asio_fwd.hpp"
#include "protocols/testio/protocol.hpp"
#include "util/mapped_file.hpp"

namespace testio::lifecycle {
class ServerTest;  // lifecycle/server_lifecycle.hpp: named here, so the server parses no lifecycle internals
}

namespace testio::control {

class ControlChannel;  // protocols/testio/channel.hpp

class TestioDoor {
 public:
  // What the door shares with the server that owns it. `one_off_ended` is called with the exit
  // code when a -1 server's one test (or its refused request) is over.
  struct Server {
    asio::io_context& io;  // where the door's coroutines and its tests run
    const config::Config& config;
    metrics::ServerMetrics& reporter;  // every test's report goes through it, counted
    lifecycle::TestSlots& slots;       // the slots and queue every protocol's tests share
    lifecycle::LogLimiter& log;
    std::function<void(int exit_code)> one_off_ended;
    std::function<std::uint16_t()> udp_port;  // where UDP flows say hello; 0 when the server has no UDP port
  };

  // Loads --psk-file's key and -F's file; throws std::runtime_error with one sentence.
  explicit TestioDoor(Server server);
  ~TestioDoor();
  TestioDoor(const TestioDoor&) = delete;
  TestioDoor& operator=(const TestioDoor&) = delete;

  // A connection whose preamble (`decoded`) has been read whole: a control connection's test is
  // run to its end; a data connection is attached to its test; a wrong version is told so.
  net::Awaitable<void> enter(net::TcpSocket socket, const DecodedPreamble& decoded, const std::string& peer);

  // The test `id` names, or nullptr.
  lifecycle::ServerTest* find(std::uint64_t id) const;
  // The data connections of the tests `peer` runs here, which may be in their handshake at once.
  std::uint64_t data_connections_of(const asio::ip::address& peer) const;
  // Bytes received and sent so far by the running tests.
  std::pair<std::uint64_t, std::uint64_t> bytes_so_far() const;

 private:
  class PeerTests;  // a test counted against its address's cap from its request to its end
  struct Admission;  // a request that passed its caps and has a slot

  void handle_data(net::TcpSocket socket, const Preamble& preamble, const std::string& peer);
  net::Awaitable<void> handle_control(net::TcpSocket socket);
  // The request, its caps and its slot (after a wait in the queue); nothing when it was refused,
  // which the client has been told and the log says.
  net::Awaitable<std::optional<Admission>> admit_request(ControlChannel& control, const std::string& peer);
  // The hello, the request, its key and its rules; throws what the client is to be told.
  net::Awaitable<TestRequest> read_request(ControlChannel& control);
  // Which cap a request from `peer` of `connections` meets, in a sentence naming the option; empty: none.
  std::string cap_refusal(const asio::ip::address& peer, std::uint64_t connections) const;
  // Why a test that may not wait for a slot is turned away.
  std::string busy_refusal() const;
  // A slot at once, or after a wait in the queue; empty when held, else the sentence for the client.
  net::Awaitable<std::string> take_slot(ControlChannel& control, Admission& admission);
  std::chrono::steady_clock::duration stall_limit() const;
  // A checked request becomes a test under way: its workload's server side (which may refuse it),
  // an id, and an entry data connections can find.
  std::shared_ptr<lifecycle::ServerTest> admit(TestRequest request, const asio::ip::address& peer,
                                               const asio::ip::address& local);
  std::uint64_t new_test_id();
  // Every running test remembers the most tests it has seen beside it.
  void note_concurrency() noexcept;

  Server server_;
  std::optional<std::string> key_;
  std::optional<util::MappedFile> served_file_;  // -F: what --transfers download
  std::map<std::uint64_t, std::shared_ptr<lifecycle::ServerTest>> tests_;
  // Tests running or waiting, by address (a pointer: a map keyed by Asio's address needs Asio).
  std::unique_ptr<std::map<asio::ip::address, std::uint32_t>> tests_per_peer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // what a test's frame checks as it goes
};

// The rules a request's test must keep here: every rule of its workload and this server's caps
// (workloads::check). Throws ProtocolError("invalid test request: ...").
void check_request(const spec::TestSpec& spec, const spec::Limits& limits);

}  // namespace testio::control
