#include "lifecycle/slots.hpp"

#include <asio/awaitable.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

namespace testio::lifecycle {

bool TestSlots::fits(std::uint64_t connections) const noexcept {
  if (closed_ || taken_ >= max_tests_) return false;
  // A test bigger than the whole cap is refused before it asks; one alone always fits.
  return !max_connections_ || taken_ == 0 || connections_ + connections <= max_connections_;
}

bool TestSlots::try_take(std::uint64_t connections) noexcept {
  if (!waiting_.empty() || !fits(connections)) return false;
  ++taken_;
  connections_ += connections;
  return true;
}

void TestSlots::release(std::uint64_t connections) noexcept {
  --taken_;
  connections_ -= connections;
  grant_waiting();
}

void TestSlots::close() noexcept {
  closed_ = true;
  for (Place* place : waiting_) place->wake_->cancel();  // each leaves the queue as it wakes
}

// First come first served: a big test at the front holds back smaller ones behind it, so none
// waits for ever.
void TestSlots::grant_waiting() noexcept {
  while (!waiting_.empty() && fits(waiting_.front()->connections_)) {
    Place& first = *waiting_.front();
    waiting_.pop_front();
    first.where_ = waiting_.end();
    first.granted_ = true;
    ++taken_;
    connections_ += first.connections_;
    first.wake_->cancel();
  }
}

TestSlots::Place::Place(TestSlots& slots, const asio::any_io_executor& executor, std::uint64_t connections)
    : slots_(slots), alive_(slots.alive_), connections_(connections),
      wake_(std::make_unique<asio::steady_timer>(executor)) {
  where_ = slots_.waiting_.insert(slots_.waiting_.end(), this);
}

TestSlots::Place::~Place() {
  if (alive_.expired()) return;  // the server went first, at its exit
  if (!granted_) {
    slots_.waiting_.erase(where_);
    slots_.grant_waiting();  // a big test leaving the front may let smaller ones in
  } else if (!claimed_) {
    slots_.release(connections_);
  }
}

std::uint32_t TestSlots::Place::ahead() const noexcept {
  std::uint32_t before = 0;
  for (const Place* place : slots_.waiting_) {
    if (place == this) break;
    ++before;
  }
  return before + 1;
}

asio::awaitable<void> TestSlots::Place::wait(std::chrono::steady_clock::duration limit) {
  if (granted_) co_return;
  wake_->expires_after(limit);
  asio::error_code ignored;  // granted (cancelled), the limit, or the wait itself cancelled
  co_await wake_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

bool TestSlots::Place::claim() noexcept {
  if (!granted_ || claimed_) return false;
  claimed_ = true;
  return true;
}

}  // namespace testio::lifecycle
