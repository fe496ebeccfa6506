// What a client test says to the other side, one implementation per protocol (src/protocols/):
// testio's control protocol, peers told nothing but the data (a plain TCP receiver or echo
// server, an HTTP server), and a stock iperf3 server.
// The one client lifecycle (client.cpp) runs the same steps for every peer and asks the peer only
// what differs between protocols: the handshake, what each data connection says first, the start,
// what may end the test early, when the window is over, the exchange of figures, and the sentence
// a failure is told in. A protocol that sets its data up itself (iperf3's UDP flows) or closes its
// streams only once told the test ended (iperf3) says so through hooks whose defaults are the
// testio, plain and HTTP peers' way.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"
#include "config/config.hpp"
#include "lifecycle/exchange.hpp"
#include "lifecycle/peer_maker.hpp"
#include "engines/stream_task.hpp"
#include "report/reporter.hpp"
#include "report/test_report.hpp"
#include "spec/test_spec.hpp"
#include "workloads/layout.hpp"
#include "workloads/workload.hpp"

namespace testio::lifecycle {

class TestParts;

// What the handshake settled: where the data connections go (empty when each stream finds its
// own, as HTTP downloads do, or the peer sets the flows up, as iperf3's UDP ones), and the control
// connection's own address when there is one (the data connections then take the same route:
// --spread, multipath).
struct PeerPath {
  std::vector<net::TcpEndpoint> data;
  std::unique_ptr<net::TcpEndpoint> control_local;  // null when none (a pointer keeps Asio out of here)
};

// One test's peer. Made per test; owner: the control thread, which calls every member.
class ClientPeer {
 public:
  virtual ~ClientPeer() = default;

  // The side of each workload this peer's data run on; null for the workload's own client side.
  virtual std::unique_ptr<workloads::TestSide> make_side(const spec::TestSpec&) { return nullptr; }
  // Agrees on the test (`threads` workers here) before any data connection opens.
  virtual net::Awaitable<PeerPath> handshake(const spec::TestSpec& spec, unsigned threads) = 0;
  // What the peer adds to the start of the report: its threads, CPUs and clock, whether it
  // speaks testio, and its name when the data connections do not give it.
  virtual void describe_start(report::StartInfo& start) const = 0;
  // The server's clock less this one's (0 when it is unknown or the same).
  virtual std::int64_t clock_offset_ns() const { return 0; }
  // What data connection (or slot) `i` says first, and the id the peer gave the test.
  virtual std::array<unsigned char, 24> preamble(std::uint32_t) const { return {}; }
  virtual std::uint64_t test_id() const { return 0; }
  // Sent on data connection `i` once it is connected.
  virtual net::Awaitable<void> introduce(net::TcpSocket& socket, std::uint32_t i);
  // Flow `i` set up by the peer's own handshake, for its stream to take; none when the stream
  // finds its own.
  virtual net::Awaitable<std::optional<net::UdpSocket>> open_flow(std::uint32_t i);
  // Returns when the peer holds every connection and the window may open.
  virtual net::Awaitable<void> await_start();
  // While the streams run: throws, in one sentence, when the peer ends the test; returns (or
  // throws) once `limit` has passed.
  virtual net::Awaitable<void> watch(std::chrono::steady_clock::duration limit);
  // True once the streams' part of the test (which opened at `clock`) is over; false when `limit`
  // passed first. By default once every stream has ended; a peer whose streams end only once it
  // is told the test ended says when its window is over, and conclude() tells it.
  virtual net::Awaitable<bool> run_window(TestParts& parts, const engines::TestClock& clock,
                                          std::chrono::steady_clock::duration limit);
  // How long past the window the streams may take to end, and why it failed when they took longer
  // (empty: the workload's own failure() tells it).
  virtual std::chrono::seconds window_grace() const = 0;
  virtual std::string unfinished(const workloads::DirectionLayout& layout) const = 0;
  // This side's window ended early (SIGINT): the peer's senders are told, when they can be.
  virtual void end_window(const workloads::DirectionLayout&) {}
  // After the window, before this side's figures are taken: the peer is told the test ended, and
  // the streams that end only then have ended. Nothing to do by default.
  virtual net::Awaitable<void> conclude(TestParts&);
  // This side's figures go to the peer; the peer's come back (none from a plain peer).
  virtual net::Awaitable<std::optional<DirectedResults>> exchange(const DirectedResults& mine,
                                                                  const workloads::TestSide& side,
                                                                  const spec::TestSpec& spec);
  // Both directions' reports of one workload, this side's figures beside the peer's (`start`
  // describes every connection). By default lifecycle::side_by_side(); a peer that keeps the
  // figures it got in its own form puts those beside.
  virtual report::TestReport side_by_side(const report::StartInfo& start, const workloads::DirectionLayout& layout,
                                          DirectedResults mine,
                                          std::optional<DirectedResults> theirs);
  // The sentence a user reads for the failure that ended the test.
  virtual std::string describe(const std::exception& error) const = 0;
  // The reporter this peer's tests report through: `given`, or one of the peer's own (a plain
  // peer's single transfer prints the line a raw sink prints).
  virtual report::Reporter& reporter(report::Reporter& given) { return given; }
};

}  // namespace testio::lifecycle
