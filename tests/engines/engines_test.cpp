// Each engine's bulk streams (asio, threads, uring) over loopback pairs in-process: a sender and a
// receiver count the same bytes, a quota or a window ends the sender and its half-close ends the
// receiver, digests agree, and an abort marks what it cut short.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <asio/read.hpp>
#include <asio/write.hpp>

#include "engines/bulk_streams.hpp"
#include "engines/worker_pool.hpp"
#include "engines/loopback_pairs.hpp"
#include "stats/summary.hpp"
#include "util/pattern.hpp"

namespace testio::engines {
namespace {

using testing::eventually;

constexpr std::size_t kBlock = 64 * 1024;

class EngineStreams : public ::testing::TestWithParam<spec::Engine> {
 protected:
  void SetUp() override {
    if (std::string reason = unusable_reason(GetParam(), false); !reason.empty()) GTEST_SKIP() << reason;
  }
  // The workers go first: their streams read the payload and write the counters.
  void TearDown() override {
    if (pool_) pool_->stop();
  }

  // `connections` pairs: senders on worker 0, receivers on worker 1 (one thread each with
  // --engine threads: the pool gets a worker per stream).
  void open(std::uint32_t connections, std::uint64_t total, spec::RecvMode mode, bool hashed,
            SendSource source = {}) {
    const unsigned threads = GetParam() == spec::Engine::threads ? 2 * connections : 2;
    pool_ = std::make_unique<WorkerPool>(threads);
    counters_ = std::make_unique<stats::StreamCounters[]>(2 * connections);
    digests_.assign(2 * connections, "");
    payload_ = util::make_pattern(kBlock);
    for (std::uint32_t i = 0; i < connections; ++i) {
      auto [near, far] = testing::loopback_pair(control_);
      Worker& sending = pool_->worker_for_stream(2 * i);
      Worker& receiving = pool_->worker_for_stream(2 * i + 1);
      SenderSpec sender{payload_.data(), kBlock, kBlock, stats::share_of_total(total, connections, i), {}, {}, source,
                        true};
      ReceiverSpec receiver{mode, kBlock, std::nullopt, true};
      if (hashed) {
        sender.digest.emplace(StreamDigest{util::Digest(util::HashKind::sha1), &digests_[2 * i]});
        receiver.digest.emplace(StreamDigest{util::Digest(util::HashKind::sha1), &digests_[2 * i + 1]});
      }
      sending.add_stream(make_sender(sending, GetParam(), testing::moved_to(sending.context(), std::move(near)),
                                     counters_[2 * i], std::move(sender), {}));
      receiving.add_stream(make_receiver(receiving, GetParam(), testing::moved_to(receiving.context(), std::move(far)),
                                         counters_[2 * i + 1], std::move(receiver), {}));
    }
    connections_ = connections;
    pool_->start();
  }

  bool all_finished() const {
    for (std::uint32_t i = 0; i < 2 * connections_; ++i)
      if (!counters_[i].finished.load(std::memory_order_acquire)) return false;
    return true;
  }
  std::uint64_t bytes(std::uint32_t stream) const { return counters_[stream].bytes.load(std::memory_order_relaxed); }

  asio::io_context control_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<stats::StreamCounters[]> counters_;
  std::vector<std::string> digests_;
  util::PageBuffer payload_;
  std::uint32_t connections_ = 0;
};

TEST_P(EngineStreams, AQuotaIsSentAndReceivedByteForByte) {
  const std::uint64_t total = (3ull << 20) + 12345;
  open(3, total, spec::RecvMode::recv_into, /*hashed=*/true);
  pool_->begin(TestClock{Clock::now()});
  ASSERT_TRUE(eventually([&] { return all_finished(); }));
  std::uint64_t sent = 0;
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(bytes(2 * i), stats::share_of_total(total, 3, i));
    EXPECT_EQ(bytes(2 * i + 1), bytes(2 * i)) << "connection " << i;
    EXPECT_FALSE(counters_[2 * i].failed.load() || counters_[2 * i + 1].failed.load());
    EXPECT_EQ(digests_[2 * i], digests_[2 * i + 1]);
    EXPECT_EQ(digests_[2 * i].size(), 40u);  // SHA-1 in hex
    sent += bytes(2 * i);
  }
  EXPECT_EQ(sent, total);
}

TEST_P(EngineStreams, TheWindowEndsASenderAndItsHalfCloseEndsTheReceiver) {
  open(2, 0, spec::RecvMode::trunc, false);
  TestClock clock{Clock::now()};
  clock.deadline = clock.start + std::chrono::milliseconds(200);
  pool_->begin(clock);
  ASSERT_TRUE(eventually([&] { return all_finished(); }));
  for (std::uint32_t i = 0; i < 2; ++i) {
    EXPECT_GT(bytes(2 * i), 0u);
    EXPECT_EQ(bytes(2 * i + 1), bytes(2 * i));
  }
}

TEST_P(EngineStreams, EndWindowStopsASenderWithoutADeadline) {
  open(1, 0, spec::RecvMode::recv, false);
  pool_->begin(TestClock{Clock::now()});
  ASSERT_TRUE(eventually([&] { return bytes(0) > 0; }));
  pool_->end_window();
  ASSERT_TRUE(eventually([&] { return all_finished(); }));
  EXPECT_EQ(bytes(1), bytes(0));
  EXPECT_FALSE(counters_[0].failed.load());
}

TEST_P(EngineStreams, StopCutsStreamsShortAndMarksThem) {
  open(1, 0, spec::RecvMode::recv_into, false);
  pool_->begin(TestClock{Clock::now()});
  ASSERT_TRUE(eventually([&] { return bytes(1) > 0; }));
  pool_->stop();
  EXPECT_TRUE(counters_[0].failed.load() || !counters_[0].finished.load());
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineStreams,
                         ::testing::Values(spec::Engine::asio, spec::Engine::threads, spec::Engine::uring),
                         [](const auto& info) { return std::string(spec::to_string(info.param)); });

// --raw: a sender to a plain receiver is done only once that receiver has closed, and it drops
// whatever the receiver sends before it does.
TEST(AsioEngine, ASenderAwaitingItsPeerEndsWhenThePeerCloses) {
  asio::io_context control;
  WorkerPool pool(1);
  auto counters = std::make_unique<stats::StreamCounters[]>(1);
  auto payload = util::make_pattern(kBlock);
  auto [near, far] = testing::loopback_pair(control);
  Worker& sending = pool.worker_for_stream(0);
  SenderSpec spec{payload.data(), kBlock, kBlock, 1u << 20, {}, {}, {}, true, /*await_peer_close=*/true};
  sending.add_stream(make_sender(sending, spec::Engine::asio, testing::moved_to(sending.context(), std::move(near)),
                                 counters[0], std::move(spec), {}));
  pool.start();
  pool.begin(TestClock{Clock::now()});
  std::vector<char> received(1u << 20);
  asio::read(far, asio::buffer(received));  // the whole quota, then EOF is on its way
  asio::write(far, asio::buffer("a reply the sender drops", 24));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(counters[0].finished.load()) << "done before its peer closed";
  far.close();
  ASSERT_TRUE(eventually([&] { return counters[0].finished.load(); }));
  EXPECT_FALSE(counters[0].failed.load());
  EXPECT_EQ(counters[0].bytes.load(), 1u << 20);
  pool.stop();
}

TEST(AsioEngine, OnlyAsioSendersAwaitTheirPeer) {
  asio::io_context control;
  WorkerPool pool(1);
  stats::StreamCounters counters;
  auto [near, far] = testing::loopback_pair(control);
  SenderSpec spec;
  spec.await_peer_close = true;
  Worker& worker = pool.worker_for_stream(0);
  EXPECT_THROW(make_sender(worker, spec::Engine::threads, testing::moved_to(worker.context(), std::move(near)),
                           counters, std::move(spec), {}),
               std::logic_error);
}

// The asio engine's zero-copy receive modes count what they map or splice beside what they copy.
TEST(AsioEngine, SpliceAndMmapReceiveEveryByte) {
  for (spec::RecvMode mode : {spec::RecvMode::splice, spec::RecvMode::mmap}) {
    asio::io_context control;
    WorkerPool pool(2);
    auto counters = std::make_unique<stats::StreamCounters[]>(2);
    auto payload = util::make_pattern(kBlock);
    auto [near, far] = testing::loopback_pair(control);
    Worker& sending = pool.worker_for_stream(0);
    Worker& receiving = pool.worker_for_stream(1);
    sending.add_stream(make_sender(sending, spec::Engine::asio, testing::moved_to(sending.context(), std::move(near)),
                                   counters[0], SenderSpec{payload.data(), kBlock, kBlock, 5u << 20, {}, {}, {}, true}, {}));
    receiving.add_stream(make_receiver(receiving, spec::Engine::asio,
                                       testing::moved_to(receiving.context(), std::move(far)), counters[1],
                                       ReceiverSpec{mode, kBlock, std::nullopt, true}, {}));
    pool.start();
    pool.begin(TestClock{Clock::now()});
    ASSERT_TRUE(eventually([&] { return counters[1].finished.load(); })) << spec::to_string(mode);
    EXPECT_EQ(counters[1].bytes.load(), 5u << 20) << spec::to_string(mode);
    EXPECT_EQ(counters[1].recv_zerocopy_bytes.load() + counters[1].recv_copied_bytes.load(), 5u << 20)
        << spec::to_string(mode);
    pool.stop();  // before the payload and the counters go
  }
}

}  // namespace
}  // namespace testio::engines
