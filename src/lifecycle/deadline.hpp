// Deadlines on every wait of a test's conversation with its peer, whatever the protocol: an
// operation raced against a timer, and the errors a peer that falls silent ends in. Owner: the
// control thread that awaits them.
#pragma once

#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "net/asio_fwd.hpp"

namespace testio::lifecycle {

// A wait on the peer passed its deadline.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nothing at all came from the peer, not even its heartbeat, for the stall limit: the peer's
// process stopped (SIGSTOP, a hung host) while its kernel keeps the connection up.
class StalledError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The outcome of an operation, with its exception caught: Asio's `||` waits for the first
// *success*, so an operation that fails fast would otherwise wait for its watchdog.
template <typename T>
struct Captured {
  std::exception_ptr error;
  std::optional<T> value;
};
template <>
struct Captured<void> {
  std::exception_ptr error;
};

template <typename T>
net::Awaitable<Captured<T>> capture(net::Awaitable<T> operation) {
  Captured<T> captured;
  try {
    if constexpr (std::is_void_v<T>)
      co_await std::move(operation);
    else
      captured.value.emplace(co_await std::move(operation));
  } catch (...) {
    captured.error = std::current_exception();
  }
  co_return captured;
}

// Runs `operation` and fails with TimeoutError("`what` timed out after N s") if the deadline comes
// first; the operation is cancelled then. A watchdog awaited beside the operation, as in Asio's
// cpp20 timeout example, rather than a socket option, so every wait in the protocol has one.
// Defined once per result type a conversation waits for (deadline_race.hpp: nothing and a byte
// count in deadline.cpp, a JSON frame in the testio control channel): the race of two coroutines
// is the heaviest template in the tree, and each unit that awaited it compiled it again.
template <typename T>
net::Awaitable<T> within(net::Awaitable<T> operation, std::chrono::steady_clock::duration limit,
                         std::string what);
extern template net::Awaitable<void> within(net::Awaitable<void>, std::chrono::steady_clock::duration,
                                            std::string);
extern template net::Awaitable<std::size_t> within(net::Awaitable<std::size_t>,
                                                   std::chrono::steady_clock::duration, std::string);

}  // namespace testio::lifecycle
