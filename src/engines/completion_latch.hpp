// Counts down from worker threads; the control coroutine awaits zero. Owner: created and awaited
// on the control thread; count_down() is safe from any thread and is the only cross-thread call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/steady_timer.hpp>

namespace testio::engines {

class CompletionLatch : public std::enable_shared_from_this<CompletionLatch> {
 public:
  CompletionLatch(asio::any_io_executor control, std::size_t count)
      : remaining_(count), timer_(control), reached_(count == 0) {}

  void count_down() noexcept;

  // True when the count reached zero, false when `limit` passed first or the wait was cancelled.
  asio::awaitable<bool> wait(std::chrono::steady_clock::duration limit);

  std::size_t remaining() const noexcept { return remaining_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::size_t> remaining_;
  asio::steady_timer timer_;
  bool reached_;  // control thread only
};

}  // namespace testio::engines
