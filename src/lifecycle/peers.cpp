// What a peer does unless its protocol says otherwise: the defaults of ClientPeer and ServerPeer.
#include <chrono>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/client_peer.hpp"
#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "lifecycle/server_peer.hpp"
#include "lifecycle/start.hpp"
#include "stats/peer_clock.hpp"
#include "util/log.hpp"

namespace testio::lifecycle {

// A peer told nothing but the data: nothing to say on a connection, no start to wait for, nothing
// that could end the test early, and no figures to exchange.
asio::awaitable<void> ClientPeer::introduce(asio::ip::tcp::socket&, std::uint32_t) { co_return; }

asio::awaitable<std::optional<asio::ip::udp::socket>> ClientPeer::open_flow(std::uint32_t) { co_return std::nullopt; }

asio::awaitable<void> ClientPeer::await_start() { co_return; }

asio::awaitable<void> ClientPeer::watch(std::chrono::steady_clock::duration limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor, limit);
  co_await timer.async_wait(asio::use_awaitable);
}

// The window is over once every stream has ended: senders their window, then a half-close;
// receivers at the peer's half-close; transfer slots once the count is taken.
asio::awaitable<bool> ClientPeer::run_window(TestParts& parts, const engines::TestClock&,
                                             std::chrono::steady_clock::duration limit) {
  co_return co_await parts.all_done(limit);
}

asio::awaitable<void> ClientPeer::conclude(TestParts&) { co_return; }

asio::awaitable<std::optional<DirectedResults>> ClientPeer::exchange(const DirectedResults&,
                                                                              const workloads::TestSide&,
                                                                              const spec::TestSpec&) {
  co_return std::nullopt;
}

report::TestReport ClientPeer::side_by_side(const report::StartInfo& start, const workloads::DirectionLayout& layout,
                                            DirectedResults mine,
                                            std::optional<DirectedResults> theirs) {
  return lifecycle::side_by_side(start, layout, workloads::Side::client, std::move(mine), std::move(theirs));
}

// The server peer's defaults: what a peer of any protocol does unless it says otherwise.

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

asio::awaitable<void> ServerPeer::before_window() { co_return; }

asio::awaitable<void> ServerPeer::window_opened() { co_return; }

// Every stream reaches its end (receivers read to EOF; a transfer slot ends with its window), so
// the counts are final.
asio::awaitable<void> ServerPeer::conclude(TestParts& parts) {
  const bool drained = co_await parts.all_done(kDrainLimit);
  if (!drained)
    util::log_warn("{} connections had not ended {} s after the client finished", parts.remaining(),
                 std::chrono::duration_cast<std::chrono::seconds>(kDrainLimit).count());
}

report::TestReport ServerPeer::side_by_side(TestPart& part) {
  return lifecycle::side_by_side(part.start, part.layout, Side::server, std::move(*part.mine), std::move(part.theirs));
}

}  // namespace testio::lifecycle
