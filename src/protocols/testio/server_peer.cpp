#include "protocols/testio/server_peer.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

#include "lifecycle/parts.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "protocols/testio/protocol.hpp"
#include "stats/peer_clock.hpp"

namespace testio::control {

using namespace std::chrono_literals;
using lifecycle::ServerPeer;
using lifecycle::ServerTest;
using lifecycle::TestPart;
using lifecycle::TestParts;

namespace {

constexpr auto kIdleClientGrace = 60s;   // beyond -O + -t before an idle client is given up on
constexpr auto kDrainLimit = 30s;    // from the client's figures to the end of every stream

class TestioServerPeer final : public ServerPeer {
 public:
  explicit TestioServerPeer(ControlChannel& control) : control_(control) {}

  std::string name() const override { return control_.peer(); }
  asio::awaitable<void> accept(const ServerTest& test) override;
  asio::awaitable<void> window_opened() override { co_await control_.write(start_message()); }
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
  ControlChannel& control_;
};

asio::awaitable<void> TestioServerPeer::accept(const ServerTest& test) {
  TestAccepted accepted;
  accepted.test_id = test.id();
  accepted.server_threads = test.threads();
  accepted.server_cpus = test.cpus();
  accepted.server_version = TESTIO_VERSION;
  accepted.server_received_ns = test.request_arrived_ns();
  accepted.server_clock_ns = stats::realtime_ns();
  co_await control_.write(to_json(accepted));
}

// The client sends its first workload's figures once its streams are done (a vanished client ends
// the test here, with an exception, as its control connection closes). A stop before that (the
// client's SIGINT) ends this side's windows early.
asio::awaitable<void> TestioServerPeer::client_done(TestParts& parts, const spec::TestSpec& spec) {
  TestPart& first = parts.front();
  control_.allow_frames_up_to(figures_frame_bound(first.connections(), 0));  // totals only, no intervals
  for (;;) {
    nlohmann::json message = co_await control_.read(engines::run_limit(spec, kIdleClientGrace));
    if (!is_stop(message)) {
      first.theirs = parse_directed_results(message, first.side->done_message(), first.layout.forward,
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
      control_.allow_frames_up_to(figures_frame_bound(part.connections(), 0));
      nlohmann::json message = co_await control_.read(kDrainLimit);
      part.theirs = parse_directed_results(message, part.side->done_message(), part.layout.forward,
                                                    part.layout.reverse);
    }
    co_await control_.write(to_json(*part.mine, "results"));
  }
}

}  // namespace

asio::awaitable<void> send_error(ControlChannel& control, const std::string& message,
                                 const std::string& code) {
  try {
    co_await control.write(error_message(message, code));
  } catch (const std::exception&) {
  }
}

std::unique_ptr<lifecycle::ServerPeer> testio_server_peer(ControlChannel& control) {
  return std::make_unique<TestioServerPeer>(control);
}

}  // namespace testio::control
