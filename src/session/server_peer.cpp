// The server peer's defaults, and a testio client as the peer: test_accepted, `start` once the
// window opened, the client's done frame (a `stop` before it ends this side's windows early), and
// the results frames both ways.
#include "session/server_peer.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

#include "session/directions.hpp"
#include "session/server.hpp"
#include "session/server_test.hpp"
#include "session/test_parts.hpp"
#include "session/test_start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"

namespace testio::session {

using namespace std::chrono_literals;
using workloads::Side;

namespace {

constexpr auto kWindowGrace = 60s;   // beyond -O + -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;    // from the client's figures to the end of every stream

class TestioServerPeer final : public ServerPeer {
 public:
  explicit TestioServerPeer(control::ControlChannel& control) : control_(control) {}

  std::string name() const override { return control_.peer(); }
  asio::awaitable<void> accept(const ServerTest& test) override;
  asio::awaitable<void> window_opened() override { co_await control_.write(control::start_message()); }
  asio::awaitable<void> client_done(TestParts& parts, const spec::TestSpec& spec) override;
  asio::awaitable<void> exchange(TestParts& parts) override;
  // The streams stay open until the client has read the sentence and gone (or 2 s, whatever it
  // sends meanwhile): a stream that ended first would be what it reported.
  asio::awaitable<void> total_rate_exceeded(const std::string& why) override {
    co_await send_error(control_, why, "failed");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    try {
      while (std::chrono::steady_clock::now() < deadline)
        (void)co_await control_.read(deadline - std::chrono::steady_clock::now());
    } catch (const std::exception&) {  // it went (end of file), or the wait is over
    }
  }

 private:
  control::ControlChannel& control_;
};

asio::awaitable<void> TestioServerPeer::accept(const ServerTest& test) {
  control::TestAccepted accepted;
  accepted.test_id = test.id();
  accepted.server_threads = test.threads();
  accepted.server_cpus = test.cpus();
  accepted.server_version = TESTIO_VERSION;
  accepted.server_received_ns = test.request_arrived_ns();
  accepted.server_clock_ns = stats::realtime_ns();
  co_await control_.write(control::to_json(accepted));
}

// The client sends its first workload's figures once its streams are done (a vanished client ends
// the test here, with an exception, as its control connection closes). A stop before that (the
// client's SIGINT) ends this side's windows early.
asio::awaitable<void> TestioServerPeer::client_done(TestParts& parts, const spec::TestSpec& spec) {
  TestPart& first = parts.front();
  control_.allow_frames_up_to(control::figures_frame_bound(first.connections(), 0));  // totals only, no intervals
  for (;;) {
    nlohmann::json message = co_await control_.read(engines::run_limit(spec, kWindowGrace));
    if (!control::is_stop(message)) {
      first.theirs = control::parse_directed_results(message, first.side->done_message(), first.layout.forward,
                                                     first.layout.reverse);
      co_return;
    }
    parts.end_window();
  }
}

// Our figures for each workload, in order; the client's for every workload after the first come
// as the answer to the one before.
asio::awaitable<void> TestioServerPeer::exchange(TestParts& parts) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    TestPart& part = parts[k];
    if (k > 0) {
      control_.allow_frames_up_to(control::figures_frame_bound(part.connections(), 0));
      nlohmann::json message = co_await control_.read(kDrainLimit);
      part.theirs = control::parse_directed_results(message, part.side->done_message(), part.layout.forward,
                                                    part.layout.reverse);
    }
    co_await control_.write(control::to_json(*part.mine, "results"));
  }
}

}  // namespace

asio::awaitable<void> ServerPeer::gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                                   std::chrono::seconds within) {
  throw control::ProtocolError(std::to_string(arrived) + " of " + std::to_string(expected) +
                               " data connections arrived within " + std::to_string(within.count()) + " s");
  co_return;
}

void ServerPeer::tune(asio::ip::tcp::socket& socket, const spec::TestSpec& spec, bool sends,
                      std::vector<std::string>& warnings) {
  std::string clamped = tune_data_connection(socket.native_handle(), spec, sends);
  if (!clamped.empty()) warnings.assign(1, std::move(clamped));  // one clamp warning for the test
}

engines::TestClock ServerPeer::clock(const spec::TestSpec& spec) {
  return engines::TestClock::starting_now(spec);
}

// Every stream reaches its end (receivers read to EOF; a transfer slot ends with its window), so
// the counts are final.
asio::awaitable<void> ServerPeer::conclude(TestParts& parts) {
  const bool drained = co_await parts.all_done(kDrainLimit);
  if (!drained)
    spdlog::warn("{} connections had not ended {} s after the client finished", parts.remaining(),
                 std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
}

report::TestReport ServerPeer::side_by_side(TestPart& part) {
  return session::side_by_side(part.start, part.layout, Side::server, std::move(*part.mine), std::move(part.theirs));
}

std::unique_ptr<ServerPeer> testio_server_peer(control::ControlChannel& control) {
  return std::make_unique<TestioServerPeer>(control);
}

}  // namespace testio::session
