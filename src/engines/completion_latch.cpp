#include "engines/completion_latch.hpp"

#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>

namespace testio::engines {

void CompletionLatch::count_down() noexcept {
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The timer is touched only on its own executor: a waiting coroutine wakes when it is cancelled.
  asio::post(timer_.get_executor(), [self = shared_from_this()] {
    self->reached_ = true;
    self->timer_.cancel();
  });
}

asio::awaitable<bool> CompletionLatch::wait(std::chrono::steady_clock::duration limit) {
  if (reached_) co_return true;
  timer_.expires_after(limit);
  asio::error_code ignored;
  co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  co_return reached_;
}

}  // namespace testio::engines
