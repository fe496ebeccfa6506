// An iperf3 client as the server's peer: what its protocol says around the one server lifecycle
// (session/server_test.cpp), and how its figures are exchanged and reported.
#include "protocols/iperf3/server_peer.hpp"

#include <optional>
#include <tuple>

#include <asio/use_awaitable.hpp>
#include <asio/steady_timer.hpp>

#include "protocols/iperf3/reports.hpp"
#include "protocols/iperf3/results.hpp"
#include "net/socket_options.hpp"
#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"
#include "util/log.hpp"

namespace testio::iperf3 {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using workloads::Side;

constexpr auto kWindowGrace = 40s;    // beyond -t + -O before a silent client is given up on
constexpr auto kResultsLimit = 10s;   // for the client's results after EXCHANGE_RESULTS
constexpr auto kDrainLimit = 5s;      // for the bytes the client says it sent to arrive
constexpr auto kDoneLimit = 5s;       // for IPERF_DONE after DISPLAY_RESULTS

std::chrono::steady_clock::duration test_end_limit(const Params& params) {
  if (params.total_bytes()) return std::chrono::hours(24 * 365);  // a vanished client closes its connection
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(params.omit_s + params.time_s)) + kWindowGrace;
}

bool receives(const workloads::DirectionLayout& layout, std::uint32_t connection) noexcept {
  return connection < layout.total() && !layout.sends_on(Side::server, connection);
}

// Bytes received so far on connection `connection` (0 if this side sends on it).
std::uint64_t received(lifecycle::TestStreams& streams, std::uint32_t connection) noexcept {
  if (!receives(streams.layout(), connection)) return 0;
  return streams.measurement().counters(connection).bytes.load(std::memory_order_relaxed);
}

std::uint64_t received_total(lifecycle::TestStreams& streams) noexcept {
  std::uint64_t total = 0;
  for (std::uint32_t connection = 0; connection < streams.layout().total(); ++connection)
    total += received(streams, connection);
  return total;
}

// Waits until every stream this side reads has counted what the client says it sent. With -O the
// client leaves out what it sent before its own omit boundary, which this side cannot know
// exactly: it waits for the streams to fall quiet instead.
asio::awaitable<bool> counted_everything(lifecycle::TestStreams& streams, const Results& client, bool omitted,
                                         std::chrono::steady_clock::duration limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto give_up = std::chrono::steady_clock::now() + limit;
  std::uint64_t last_total = received_total(streams);
  int quiet_ticks = 0;
  for (;;) {
    bool all = true;
    if (omitted) {
      const std::uint64_t total = received_total(streams);
      quiet_ticks = total == last_total ? quiet_ticks + 1 : 0;
      last_total = total;
      all = quiet_ticks >= 20;  // 20 ms without a byte: nothing is in flight on loopback or a LAN
    } else {
      for (const StreamResult& stream : client.streams) {
        std::optional<std::uint32_t> connection = connection_of(stream.id);
        if (connection && receives(streams.layout(), *connection) && received(streams, *connection) < stream.bytes)
          all = false;
      }
    }
    if (all) co_return true;
    if (std::chrono::steady_clock::now() >= give_up) co_return false;
    timer.expires_after(1ms);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

// iperf3's own server goes on with the default when an option is refused; so does this side.
void apply_options(tcp::socket& socket, const Params& params, std::vector<std::string>& warnings) {
  const int fd = socket.native_handle();
  if (params.window) {
    std::string clamped = net::clamp_warning(net::set_socket_buffers(fd, params.window));
    if (!clamped.empty() && warnings.empty()) warnings.push_back(clamped);
  }
  // One option at a time, so a refused congestion control does not skip no-delay.
  net::TcpTuning no_delay, congestion, tos;
  no_delay.no_delay = params.nodelay;
  congestion.congestion = params.congestion;
  tos.tos = static_cast<std::uint8_t>(params.tos);
  for (const net::TcpTuning& tuning : {no_delay, congestion, tos}) {
    try {
      net::apply_tuning(fd, tuning);
    } catch (const std::runtime_error& refused) {
      if (warnings.size() < 2) warnings.push_back(std::string(refused.what()) + "; the default is used");
    }
  }
}

// One test's iperf3 client. Owner: the control thread, which calls every member.
class Iperf3ServerPeer final : public lifecycle::ServerPeer {
 public:
  Iperf3ServerPeer(Control& control, const Params& params, std::string name)
      : control_(control), params_(params), name_(std::move(name)) {}

  std::string name() const override { return name_; }
  asio::awaitable<void> accept(const lifecycle::ServerTest&) override {
    co_await control_.write_state(State::create_streams);
  }
  bool gathers_flows() const override { return params_.udp; }
  asio::awaitable<void> gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                         std::chrono::seconds within) override;
  asio::awaitable<void> total_rate_exceeded(const std::string& why) override;
  void tune(tcp::socket& socket, const spec::TestSpec&, bool, std::vector<std::string>& warnings) override {
    apply_options(socket, params_, warnings);
  }
  void tune_flow(asio::ip::udp::socket& socket, const spec::TestSpec&, std::vector<std::string>& warnings) override {
    if (params_.tos) {
      try {
        net::set_tos(socket.native_handle(), static_cast<std::uint8_t>(params_.tos));
      } catch (const std::runtime_error& refused) {
        if (warnings.size() < 2) warnings.push_back(std::string(refused.what()) + "; the default is used");
      }
    }
    if (!params_.window) return;
    std::string clamped = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), params_.window));
    if (!clamped.empty() && warnings.empty()) warnings.push_back(clamped);
  }
  void describe_start(report::StartInfo& start) const override {
    start.client_threads = 1;  // iperf3 before 3.16 runs a test on one thread; later ones do not say
    start.spec.congestion.clear();  // applied as iperf3 asks, not testio's tuning
    start.spec.no_delay = false;
  }
  // The client times the window (or counts the bytes): no deadline here.
  engines::TestClock clock(const spec::TestSpec&) override { return clock_ = engines::TestClock{engines::Clock::now()}; }
  asio::awaitable<void> before_window() override {
    co_await control_.write_state(State::test_start);
    co_await control_.write_state(State::test_running);
  }
  asio::awaitable<void> client_done(lifecycle::TestParts& parts, const spec::TestSpec& spec) override;
  asio::awaitable<void> conclude(lifecycle::TestParts& parts) override;
  asio::awaitable<void> exchange(lifecycle::TestParts& parts) override;
  report::TestReport side_by_side(lifecycle::TestPart& part) override;

 private:
  Control& control_;
  const Params params_;
  const std::string name_;
  engines::TestClock clock_;
  std::optional<double> window_end_s_;
  Results client_;
  DirectionResults sent_, received_;
};

// The client reads its control connection between writes: the streams stay open until it has
// gone (or 2 s, whatever it sends meanwhile), else a write that fails as they close is the error
// it prints instead.
asio::awaitable<void> Iperf3ServerPeer::total_rate_exceeded(const std::string&) {
  co_await control_.write_error(kErrorTotalRate);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  try {
    while (std::chrono::steady_clock::now() < deadline)
      (void)co_await control_.read_state(deadline - std::chrono::steady_clock::now(),
                                         "waiting for the iperf3 client to go");
  } catch (const std::exception&) {  // it went (end of file), or the wait is over
  }
}

asio::awaitable<void> Iperf3ServerPeer::gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                                         std::chrono::seconds within) {
  co_await control_.write_error(kErrorStreamAccept);
  std::string why = std::to_string(arrived) + " of " + std::to_string(expected);
  why.append(params_.udp ? " iperf3 UDP streams" : " iperf3 data connections")
      .append(" arrived within ")
      .append(std::to_string(within.count()))
      .append(" s");
  throw ProtocolError(why);
}

// Until the client says TEST_END: it times the test (or counts the bytes).
asio::awaitable<void> Iperf3ServerPeer::client_done(lifecycle::TestParts&, const spec::TestSpec&) {
  const State state = co_await control_.read_state(test_end_limit(params_), "waiting for TEST_END");
  if (state == State::client_terminate || state == State::iperf_done)
    throw PeerError("the iperf3 client ended the test early");
  expect_state(state, State::test_end, "while the test ran");
}

// The client's results first; then every byte it sent is counted here, and the senders stop.
asio::awaitable<void> Iperf3ServerPeer::conclude(lifecycle::TestParts& parts) {
  // The senders' figures run to this moment even when a sender's last write completed earlier, as
  // iperf3 times its streams.
  window_end_s_ = static_cast<double>(clock_.since_start(engines::Clock::now())) * 1e-9;
  lifecycle::TestStreams& streams = *parts.front().streams;
  co_await control_.write_state(State::exchange_results);
  std::string client_body =
      co_await control_.read_json(kResultsLimit, kMaxResultsJson, "waiting for the iperf3 client's results");
  client_ = parse_results(client_body, stream_ids(params_.connections()));
  // The server reads the forward direction (the client's sending) and sends the reverse one.
  const bool receives = streams.layout().count(true) > 0;
  if (params_.udp) {
    // Datagrams lost on the way never come: the receivers end once their flows fall quiet.
    if (receives) co_await streams.done(true).wait(kDrainLimit);
  } else if (!co_await counted_everything(streams, client_, params_.omit_s > 0, kDrainLimit)) {
    spdlog::warn("the iperf3 client from {} reports more bytes sent than arrived here", name_);
  }
  co_await streams.done(false).wait(kDrainLimit);
}

// Ours, with every connection by its iperf3 id; then DISPLAY_RESULTS and the client's IPERF_DONE.
asio::awaitable<void> Iperf3ServerPeer::exchange(lifecycle::TestParts& parts) {
  lifecycle::TestPart& part = parts.front();
  std::tie(sent_, received_) = by_direction(*part.mine, part.layout, Side::server, window_end_s_);
  // A stream this side reads that has not seen EOF still ended cleanly if it counted every byte the
  // client says it sent: an iperf3 client closes only after the results. (The client leaves its
  // omitted bytes out; this side's totals still hold them.)
  for (const StreamResult& stream : client_.streams) {
    std::optional<std::uint32_t> connection = connection_of(stream.id);
    if (!connection || !receives(part.layout, *connection)) continue;
    stats::StreamFigures& figures = received_.side.streams[part.layout.index_in_direction(*connection)];
    if (figures.bytes >= stream.bytes) figures.failed = false;
  }
  Results ours = results_of(sent_, received_, part.layout.total(), params_.udp);
  if (params_.get_server_output) ours.server_output_text = output_text(sent_, received_);
  co_await control_.write_json(to_json(ours));
  co_await control_.write_state(State::display_results);
  try {
    State done = co_await control_.read_state(kDoneLimit, "waiting for IPERF_DONE");
    if (done != State::iperf_done)
      spdlog::debug("the iperf3 client ended with {}", state_name(static_cast<std::int8_t>(done)));
  } catch (const std::exception&) {
    // A client that just closes is done too.
  }
}

// Forward is the client sending; with --bidir the reverse rides along. The client's counts stand
// beside ours.
report::TestReport Iperf3ServerPeer::side_by_side(lifecycle::TestPart& part) {
  std::optional<report::TestReport> forward, reverse;
  if (received_.present) forward = direction_report(part.start, received_, false, client_);
  if (sent_.present) reverse = direction_report(part.start, sent_, true, client_);
  return lifecycle::final_report(std::move(forward), std::move(reverse));
}

}  // namespace

std::unique_ptr<lifecycle::ServerPeer> iperf3_server_peer(Control& control, const Params& params, std::string name) {
  return std::make_unique<Iperf3ServerPeer>(control, params, std::move(name));
}

}  // namespace testio::iperf3
