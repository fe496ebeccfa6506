// The server's slots: tests running or being set up, against --max-tests and the server-wide cap
// on data connections (--max-server-connections), and the tests waiting for one (--queue), first
// come first served. Both protocols share them, so "busy" means the same whoever asks; only
// testio's clients can wait (iperf3's protocol has no word for it), and none jumps the queue.
// Owner: the control thread; every member is touched only there.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>

#include "net/asio_fwd.hpp"

namespace testio::lifecycle {

class TestSlots {
 public:
  // `max_connections` 0: no cap on connections.
  TestSlots(std::uint32_t max_tests, std::uint64_t max_connections, std::uint32_t queue) noexcept
      : max_tests_(max_tests), max_connections_(max_connections), queue_limit_(queue) {}

  // A slot now for a test of `connections`, when one is free, nobody waits and the server is not
  // stopping. The caller counts a refusal it sends (count_busy()).
  bool try_take(std::uint64_t connections = 0) noexcept;
  // The server stops: nothing more is granted, and every place in the queue is woken unserved.
  void close() noexcept;
  bool closed() const noexcept { return closed_; }
  // A test slot is free, but the running tests hold too many connections for the next test.
  bool held_by_connections() const noexcept { return taken_ < max_tests_; }
  // A slot given back: the tests waiting at the front get theirs while they fit.
  void release(std::uint64_t connections = 0) noexcept;
  // The queue holds no more.
  bool queue_full() const noexcept { return waiting_.size() >= queue_limit_; }
  std::uint32_t taken() const noexcept { return taken_; }
  std::uint64_t connections() const noexcept { return connections_; }
  std::uint32_t waiting() const noexcept { return static_cast<std::uint32_t>(waiting_.size()); }
  std::uint64_t busy_refusals() const noexcept { return busy_refusals_; }
  void count_busy() noexcept { ++busy_refusals_; }

  // A slot held from try_take() or Place::claim() on, given back when this goes. Every holder
  // checks that the slots still exist: at the server's exit, the frames of the tests it was
  // running are destroyed after it.
  class Held {
   public:
    Held(TestSlots& slots, std::uint64_t connections) noexcept
        : slots_(&slots), alive_(slots.alive_), connections_(connections) {}
    ~Held() {
      if (!alive_.expired()) slots_->release(connections_);
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    TestSlots* slots_;
    std::weak_ptr<bool> alive_;
    std::uint64_t connections_;
  };

  // A test's place in the queue, from construction (at its end) to its slot or its leaving. The
  // slot, once granted, is the holder's: claim() says so; a place destroyed with a slot granted
  // and not claimed gives it back.
  class Place {
   public:
    Place(TestSlots& slots, const asio::any_io_executor& executor, std::uint64_t connections);
    ~Place();
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

    // Tests that must end before this one starts: those ahead in the queue, and one running.
    std::uint32_t ahead() const noexcept;
    // Returns when the slot is granted or `limit` passed (or the wait is cancelled).
    net::Awaitable<void> wait(std::chrono::steady_clock::duration limit);
    // True, once, when the slot was granted: from then on the caller releases it.
    bool claim() noexcept;

   private:
    friend class TestSlots;
    TestSlots& slots_;
    std::weak_ptr<bool> alive_;
    std::uint64_t connections_;
    std::unique_ptr<net::SteadyTimer> wake_;  // a pointer keeps Asio out of this header
    bool granted_ = false;
    bool claimed_ = false;
    std::list<Place*>::iterator where_;
  };

 private:
  bool fits(std::uint64_t connections) const noexcept;
  void grant_waiting() noexcept;

  std::uint32_t max_tests_;
  std::uint64_t max_connections_;
  std::uint32_t queue_limit_;
  std::uint32_t taken_ = 0;
  std::uint64_t connections_ = 0;
  std::uint64_t busy_refusals_ = 0;  // for --metrics
  bool closed_ = false;
  std::list<Place*> waiting_;        // in order of arrival
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // what holders check
};

}  // namespace testio::lifecycle
