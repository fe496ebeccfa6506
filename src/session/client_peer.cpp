#include "session/client_peer.hpp"

#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

namespace testio::session {

// A peer told nothing but the data: nothing to say on a connection, no start to wait for, nothing
// that could end the test early, and no figures to exchange.
asio::awaitable<void> ClientPeer::introduce(asio::ip::tcp::socket&, std::uint32_t) { co_return; }

asio::awaitable<void> ClientPeer::await_start() { co_return; }

asio::awaitable<void> ClientPeer::watch(std::chrono::steady_clock::duration limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor, limit);
  co_await timer.async_wait(asio::use_awaitable);
}

asio::awaitable<std::optional<control::DirectedResults>> ClientPeer::exchange(const control::DirectedResults&,
                                                                              const workloads::TestSide&,
                                                                              const spec::TestSpec&) {
  co_return std::nullopt;
}

}  // namespace testio::session
