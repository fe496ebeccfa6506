// The definition of within(): the race of an operation and a timer, the heaviest template in the
// tree. Only the units that instantiate it for a result type include this (deadline.cpp for
// nothing and byte counts, the testio control channel for JSON frames); every other unit uses the
// extern declarations in deadline.hpp.
#pragma once

#include <string>
#include <variant>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/deadline.hpp"

namespace testio::lifecycle {

template <typename T>
asio::awaitable<T> within(asio::awaitable<T> operation, std::chrono::steady_clock::duration limit,
                          std::string what) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor, limit);
  auto result = co_await (capture(std::move(operation)) || timer.async_wait(asio::use_awaitable));
  if (result.index() == 1)
    throw TimeoutError(what + " timed out after " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
                       " s");
  Captured<T>& captured = std::get<0>(result);
  if (captured.error) std::rethrow_exception(captured.error);
  if constexpr (!std::is_void_v<T>) co_return std::move(*captured.value);
}

}  // namespace testio::lifecycle
