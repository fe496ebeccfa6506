// The server's side of one accepted test: the data connections it gathers or routes, and the
// lifecycle that runs it, mirroring the client's. Whatever differs between the protocols its
// client may speak (testio's, iperf3's) the lifecycle asks its ServerPeer (server_peer.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lifecycle/deadline.hpp"
#include "lifecycle/exchange.hpp"
#include "engines/completion_latch.hpp"
#include "report/reporter.hpp"
#include "lifecycle/server_peer.hpp"
#include "lifecycle/parts.hpp"
#include "net/asio_fwd.hpp"
#include "workloads/workload.hpp"

namespace testio::lifecycle {

// Owner: the control thread. The acceptor attaches data connections to it by id; run() drives it.
class ServerTest {
 public:
  // `parts` are the workloads' server parts for `request.spec`; `cpus` pin the workers (-A: the
  // server's own list, else the client's).
  // `peer`: the address the client's control connection came from; `local`: the one it came to
  // (where this test's UDP flows are answered from); either may be unspecified.
  ServerTest(const asio::any_io_executor& executor, std::uint64_t id, TestRequest request, TestParts parts,
             std::vector<std::uint32_t> cpus, const asio::ip::address& peer, const asio::ip::address& local);
  ~ServerTest();

  std::uint64_t id() const noexcept { return id_; }
  const spec::TestSpec& spec() const noexcept { return request_.spec; }
  const std::vector<std::uint32_t>& cpus() const noexcept { return cpus_; }
  unsigned threads() const noexcept { return parts_.threads(); }
  std::uint64_t request_arrived_ns() const noexcept { return request_arrived_ns_; }
  const asio::ip::address& peer() const noexcept;
  // The data connections its client opens: at once before the start, or one per slot at a time.
  std::uint32_t data_connections() const noexcept { return parts_.connections(); }
  // When the request arrived (CLOCK_REALTIME ns), for the client's estimate of the clocks' offset.
  void note_request_arrival(std::uint64_t realtime_ns) noexcept { request_arrived_ns_ = realtime_ns; }
  void note_tests_beside(std::uint32_t count) noexcept { tests_beside_ = std::max(tests_beside_, count); }
  // --server-bitrate-limit: run() ends the test with TotalRateExceeded once its bytes both ways
  // average above `cap_bps` over `window_s` (total_rate_cap.hpp). 0: no cap.
  void cap_total_rate(double cap_bps, double window_s) noexcept {
    rate_cap_bps_ = cap_bps;
    rate_cap_window_s_ = window_s;
  }

  // Data connection `index` arrived: gathered before the start, or routed to its slot while a
  // during-test workload runs. Empty when taken; otherwise why it was refused.
  std::string attach(std::uint32_t index, net::TcpSocket socket);
  // UDP flow `index` said hello from `from` to this server's UDP `port` while the test runs: the
  // flow gets a socket of its own (bound to the port, connected to `from`), routed to its stream,
  // and the answer goes back from it. A repeated hello from the same place is answered again.
  // Empty when taken; otherwise why it was refused.
  std::string attach_flow(std::uint32_t index, const net::UdpEndpoint& from, std::uint16_t port);
  // Flow `index`, set up by the peer's own handshake before the start (ServerPeer::gathers_flows(),
  // iperf3 -u): gathered with the data connections, then routed to its stream. Empty when taken.
  std::string gather_flow(std::uint32_t index, net::UdpSocket socket);

  // What this side has received and sent so far (--metrics reads it when scraped: the workers'
  // own counters, nothing added to the data path); zeros once the test is reported, as its
  // report then holds the same bytes, and before its streams exist.
  std::pair<std::uint64_t, std::uint64_t> bytes_so_far() noexcept;
  bool reported() const noexcept { return reported_; }
  // Still gathering its data connections (and the peer's flows): none has been refused yet.
  bool gathering() const noexcept { return phase_ == Phase::gathering; }
  // The reporter has been given the start (a test that ends now has a report to close).
  bool started() const noexcept { return started_; }

  // Runs the test with `peer` to its end and reports it. Returns true when every stream ended
  // cleanly and both sides counted the same; throws when the client breaks the protocol or goes away.
  net::Awaitable<bool> run(ServerPeer& peer, report::Reporter& reporter);

 private:
  enum class Phase { gathering, running, over };

  std::size_t expected_before_start() const noexcept;
  net::Awaitable<void> gather(ServerPeer& peer);
  net::Awaitable<void> await_arrivals(ServerPeer& peer);
  void open_streams(ServerPeer& peer);
  void open_part(TestPart& part, ServerPeer& peer, std::vector<std::string>& warnings);
  net::Awaitable<void> start(ServerPeer& peer, report::Reporter& reporter);
  net::Awaitable<void> wait_for_client(ServerPeer& peer);
  net::Awaitable<std::string> watch_total_rate();
  net::Awaitable<void> finish_streams(ServerPeer& peer);
  bool report(ServerPeer& peer, report::Reporter& reporter);

  // Its executor, its client's addresses, and the connections and flows it gathers: Asio's types,
  // held through a pointer so that the doors that include this header parse no Asio.
  struct Network;

  std::unique_ptr<Network> net_;
  std::uint64_t id_;
  TestRequest request_;
  TestParts parts_;
  std::vector<std::uint32_t> cpus_;
  // By flow, once it said hello: its socket, owned by its stream (open until the test is over).
  std::vector<int> flow_fds_;
  Phase phase_ = Phase::gathering;
  bool gathers_flows_ = false;
  std::shared_ptr<engines::CompletionLatch> all_arrived_;      // the before-start workloads' connections
  std::uint32_t tests_beside_ = 0;
  double rate_cap_bps_ = 0;
  double rate_cap_window_s_ = 0;
  std::uint64_t request_arrived_ns_ = 0;
  bool started_ = false;
  bool reported_ = false;
};

}  // namespace testio::lifecycle
