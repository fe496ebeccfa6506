// What a server test says to its client, one implementation per protocol: testio's control
// protocol (protocols/testio/server_peer.cpp; the defaults are peers.cpp's) and a stock iperf3 client (protocols/iperf3/server.cpp). The
// one server lifecycle (server_lifecycle.cpp) runs the same steps for every client and asks the peer
// only what differs between protocols: how the test is accepted, the sentence (and the word to
// the client) when its data connections do not all arrive, how they are tuned, the start, what
// the client says when its part is done, how the streams end, the exchange of figures and the
// report. Mirrors the client's ClientPeer (client_peer.hpp); the defaults are testio's way.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"
#include "lifecycle/deadline.hpp"
#include "engines/stream_task.hpp"
#include "report/test_report.hpp"
#include "spec/test_spec.hpp"

namespace testio::lifecycle {

class ServerTest;
class TestParts;
struct TestPart;

// One test's client. Made per test; owner: the control thread, which calls every member.
class ServerPeer {
 public:
  virtual ~ServerPeer() = default;

  // Where the client's control connection comes from, as the report names it.
  virtual std::string name() const = 0;
  // Tells the client its test is accepted: its data connections may come now.
  virtual net::Awaitable<void> accept(const ServerTest& test) = 0;
  // The peer sets its flows up itself before the start (iperf3 -u's UDP handshake, through the
  // door): ServerTest gathers them with the data connections (ServerTest::gather_flow()).
  virtual bool gathers_flows() const { return false; }
  // Awaited beside the gathering of the data connections, which ends when this returns: a living
  // client says nothing on its control connection then (but testio's heartbeats), so this throws
  // why as soon as something comes (its end of file or reset, a stall, a message out of turn).
  // `limit`: longer than any gathering.
  virtual net::Awaitable<void> watch_gathering(std::chrono::steady_clock::duration limit) = 0;
  // Only `arrived` of the `expected` data connections (or flows) came `within` the limit: throws
  // the sentence the log and the report give, once the client has been told when it expects to be.
  virtual net::Awaitable<void> gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                                std::chrono::seconds within);
  // The test went above --server-bitrate-limit (`why`) and ends now, its streams still open: the
  // client hears it as its protocol says (iperf3's IETOTALRATE, testio's error frame) before a
  // stream's end could tell it something else.
  virtual net::Awaitable<void> total_rate_exceeded(const std::string& why) = 0;
  // A gathered data connection (`sends`: this side sends on it) tuned as the test asks; a
  // sentence the log should give goes to `warnings`. By default testio's -w and tuning, which
  // throw when the kernel refuses.
  virtual void tune(net::TcpSocket& socket, const spec::TestSpec& spec, bool sends,
                    std::vector<std::string>& warnings);
  // A flow gathered before the start, tuned likewise. Nothing by default.
  virtual void tune_flow(net::UdpSocket&, const spec::TestSpec&, std::vector<std::string>&) {}
  // What the peer changes in the start of the report (the options its own protocol applied).
  virtual void describe_start(report::StartInfo&) const {}
  // The window's clock: by default this side times it (`spec`'s -t); a peer whose client times
  // it gives no deadline.
  virtual engines::TestClock clock(const spec::TestSpec& spec);
  // Said to the client just before the window opens, and once it has.
  virtual net::Awaitable<void> before_window();  // nothing by default
  virtual net::Awaitable<void> window_opened();  // nothing by default
  // Returns when the client says its part of the test is done (`spec`: the whole test), with its
  // figures in the parts' `theirs` when it sends them; throws when it ends the test otherwise.
  // Intervals tick meanwhile (the lifecycle samples them).
  virtual net::Awaitable<void> client_done(TestParts& parts, const spec::TestSpec& spec) = 0;
  // After this side's windows ended: every stream reaches its end, as far as the peer waits for
  // it. By default every stream of every part, warning when they do not within 30 s.
  virtual net::Awaitable<void> conclude(TestParts& parts);
  // This side's figures (each part's `mine`) go to the client; the client's come when the peer
  // takes them now.
  virtual net::Awaitable<void> exchange(TestParts& parts) = 0;
  // Both directions' reports of one workload, this side's figures beside the client's. By default
  // lifecycle::side_by_side() of the part's `mine` and `theirs`.
  virtual report::TestReport side_by_side(TestPart& part);
};

}  // namespace testio::lifecycle
