#include "lifecycle/client_peer.hpp"

#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"

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

}  // namespace testio::lifecycle
