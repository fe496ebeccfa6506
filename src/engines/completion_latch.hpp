// Counts down from worker threads; the control coroutine awaits zero. Owner: created and awaited
// on the control thread; count_down() is safe from any thread and is the only cross-thread call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "net/asio_fwd.hpp"

namespace testio::engines {

class CompletionLatch : public std::enable_shared_from_this<CompletionLatch> {
 public:
  CompletionLatch(const asio::any_io_executor& control, std::size_t count);
  ~CompletionLatch();

  void count_down() noexcept;

  // True when the count reached zero, false when `limit` passed first or the wait was cancelled.
  net::Awaitable<bool> wait(std::chrono::steady_clock::duration limit);

  std::size_t remaining() const noexcept { return remaining_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::size_t> remaining_;
  std::unique_ptr<net::SteadyTimer> timer_;  // on the control thread's executor
  bool reached_;  // control thread only
};

}  // namespace testio::engines
