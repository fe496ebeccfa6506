// The server's slots and its queue: first come first served, the connection cap, and a place that
// leaves or is granted and never claimed.
#include "lifecycle/slots.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>

namespace testio::lifecycle {
namespace {

using namespace std::chrono_literals;

// A coroutine on `io` waiting an hour in `place`; the flag says when its wait ended.
std::shared_ptr<bool> wait_an_hour(asio::io_context& io, TestSlots::Place& place) {
  auto woke = std::make_shared<bool>(false);
  asio::co_spawn(io, [&place, woke]() -> asio::awaitable<void> {
    co_await place.wait(1h);
    *woke = true;
  }, asio::detached);
  io.poll();
  return woke;
}

TEST(TestSlots, TakesUpToTheCapAndNothingOnceClosed) {
  TestSlots slots(2, 0, 4);
  EXPECT_TRUE(slots.try_take());
  EXPECT_TRUE(slots.try_take());
  EXPECT_FALSE(slots.try_take());
  EXPECT_EQ(slots.busy_refusals(), 0u);  // the caller counts the busy answer it sends
  slots.release();
  EXPECT_TRUE(slots.try_take());
  EXPECT_EQ(slots.taken(), 2u);
  slots.release();
  slots.close();  // -1's test ended, or a signal: no other starts
  EXPECT_FALSE(slots.try_take());
}

TEST(TestSlots, ClosingWakesTheQueueUnserved) {
  asio::io_context io;
  TestSlots slots(1, 0, 2);
  ASSERT_TRUE(slots.try_take());
  TestSlots::Place waiting(slots, io.get_executor(), 0);
  std::shared_ptr<bool> woke = wait_an_hour(io, waiting);
  slots.close();
  slots.release();
  io.run_for(1s);
  EXPECT_TRUE(*woke);
  EXPECT_FALSE(waiting.claim());
}

TEST(TestSlots, TheQueueIsServedInOrderAndNobodyJumpsIt) {
  asio::io_context io;
  TestSlots slots(1, 0, 2);
  ASSERT_TRUE(slots.try_take());
  std::optional<TestSlots::Place> first, second;
  first.emplace(slots, io.get_executor(), 0);
  second.emplace(slots, io.get_executor(), 0);
  EXPECT_EQ(first->ahead(), 1u);
  EXPECT_EQ(second->ahead(), 2u);
  EXPECT_TRUE(slots.queue_full());
  slots.release();
  EXPECT_FALSE(slots.try_take());  // the slot went to the first in the queue, not to a newcomer
  EXPECT_TRUE(first->claim());
  EXPECT_FALSE(first->claim());  // once
  EXPECT_FALSE(second->claim());
  EXPECT_EQ(second->ahead(), 1u);
  slots.release();  // the first test ends
  EXPECT_TRUE(second->claim());
  EXPECT_EQ(slots.taken(), 1u);
}

TEST(TestSlots, APlaceGrantedAndNeverClaimedGivesItsSlotBack) {
  asio::io_context io;
  TestSlots slots(1, 0, 2);
  ASSERT_TRUE(slots.try_take());
  {
    TestSlots::Place place(slots, io.get_executor(), 0);
    slots.release();
    EXPECT_EQ(slots.taken(), 1u);  // granted to the place
  }  // its client left before it started
  EXPECT_EQ(slots.taken(), 0u);
  EXPECT_TRUE(slots.try_take());
}

TEST(TestSlots, TheConnectionCapHoldsABigTestAndThoseBehindIt) {
  asio::io_context io;
  TestSlots slots(4, 8, 4);
  ASSERT_TRUE(slots.try_take(6));
  EXPECT_FALSE(slots.try_take(4));  // 10 connections would pass 8
  std::optional<TestSlots::Place> big, small;
  big.emplace(slots, io.get_executor(), 4);
  small.emplace(slots, io.get_executor(), 1);
  slots.release(6);
  EXPECT_TRUE(big->claim());
  EXPECT_TRUE(small->claim());
  EXPECT_EQ(slots.connections(), 5u);
  // A test alone always fits: one bigger than the cap is refused before it asks (Server).
  slots.release(4);
  slots.release(1);
  EXPECT_TRUE(slots.try_take(20));
}

TEST(TestSlots, ABigTestLeavingTheFrontLetsTheSmallerIn) {
  asio::io_context io;
  TestSlots slots(4, 8, 4);
  ASSERT_TRUE(slots.try_take(6));
  std::optional<TestSlots::Place> big, small;
  big.emplace(slots, io.get_executor(), 4);
  small.emplace(slots, io.get_executor(), 2);
  EXPECT_FALSE(small->claim());  // behind the big one, though it would fit
  big.reset();                   // its client gave up
  EXPECT_TRUE(small->claim());
}

TEST(TestSlots, AWaitEndsWhenGrantedOrAtItsLimit) {
  asio::io_context io;
  TestSlots slots(1, 0, 2);
  ASSERT_TRUE(slots.try_take());
  TestSlots::Place granted(slots, io.get_executor(), 0);
  std::shared_ptr<bool> woke = wait_an_hour(io, granted);
  EXPECT_FALSE(*woke);
  slots.release();
  io.run_for(1s);
  EXPECT_TRUE(*woke);
  EXPECT_TRUE(granted.claim());

  io.restart();
  TestSlots::Place late(slots, io.get_executor(), 0);
  asio::co_spawn(io, late.wait(10ms), asio::detached);
  io.run_for(2s);
  EXPECT_FALSE(late.claim());  // the limit came first: busy
}

}  // namespace
}  // namespace testio::lifecycle
