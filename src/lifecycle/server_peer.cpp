// The server peer's defaults: what a peer of any protocol does unless it says otherwise.
#include "lifecycle/server_peer.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

#include "lifecycle/directions.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"

namespace testio::lifecycle {

using namespace std::chrono_literals;
using workloads::Side;

namespace {

constexpr auto kDrainLimit = 30s;    // from the client's figures to the end of every stream

}  // namespace

asio::awaitable<void> ServerPeer::gathering_failed(std::uint32_t arrived, std::uint32_t expected,
                                                   std::chrono::seconds within) {
  throw ProtocolError(std::to_string(arrived) + " of " + std::to_string(expected) +
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
  return lifecycle::side_by_side(part.start, part.layout, Side::server, std::move(*part.mine), std::move(part.theirs));
}

}  // namespace testio::lifecycle
