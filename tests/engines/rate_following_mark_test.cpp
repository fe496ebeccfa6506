#include "engines/rate_following_mark.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>


#include <gtest/gtest.h>

namespace testio::engines {
namespace {

using Kind = RateFollowingMark::Kind;
constexpr std::size_t kCall = 2u << 20;
constexpr double kGbit = 1e9 / 8;  // bytes per second
constexpr std::size_t kBuffer = 16u << 20;  // a receive buffer as autotuning grows it on a fast path

TEST(RateFollowingMark, ReceiverIsWokenPerSegmentBelowFourGigabits) {
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 0, kCall, kBuffer), 1);
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 1 * kGbit, kCall, kBuffer), 1);
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 4 * kGbit, kCall, kBuffer), 1);  // 500 000 bytes a ms
}

TEST(RateFollowingMark, ReceiverBatchesAMillisecondRoundedDown) {
  // 5 Gbit/s: 625 000 bytes a millisecond, rounded down to 512 KiB.
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 5 * kGbit, kCall, kBuffer), 512 * 1024);
}

TEST(RateFollowingMark, ReceiverBatchNeverExceedsAMebibyteOrOneRead) {
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 100 * kGbit, kCall, kBuffer), 1 << 20);
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 100 * kGbit, 768 * 1024, kBuffer), 512 * 1024);
  // A read smaller than the least worthwhile batch: per-segment wakeups, as without the mark.
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 100 * kGbit, 256 * 1024, kBuffer), 1);
}

TEST(RateFollowingMark, ReceiverBatchStaysWithinAQuarterOfTheGrantedBuffer) {
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 100 * kGbit, kCall, 3u << 20), 512 * 1024);
  // A quarter of tcp_rmem[1]'s 128 KiB is below the least batch: no mark until autotuning grows it.
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::receive_wakeup, 100 * kGbit, kCall, 128 * 1024), 1);
}

TEST(RateFollowingMark, SenderKeepsAtLeastAMebibyteAndAMillisecondUnsent) {
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::send_backlog, 0, 0, 0), 1 << 20);
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::send_backlog, 1 * kGbit, 0, 0), 1 << 20);
  // 80 Gbit/s: 10 MB a millisecond, rounded down to 8 MiB.
  EXPECT_EQ(RateFollowingMark::mark_for(Kind::send_backlog, 80 * kGbit, 0, 0), 8 << 20);
}

TEST(RateFollowingMark, ReceiversBatchOnlyWhereAWorkerServesAtMostEightConnections) {
  EXPECT_TRUE(receivers_batch_wakeups(2, 2));
  EXPECT_TRUE(receivers_batch_wakeups(16, 2));
  EXPECT_FALSE(receivers_batch_wakeups(17, 2));
  EXPECT_FALSE(receivers_batch_wakeups(32, 2));
  EXPECT_TRUE(receivers_batch_wakeups(32, 32));  // --engine threads: a thread per connection
}

// A connected TCP socket on loopback (the options are TCP's), closed with the fixture.
class MarkOnSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ASSERT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listener_, 1), 0);
    ASSERT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    if (listener_ >= 0) ::close(listener_);
  }
  int option(int level, int name) const {
    int value = -1;
    socklen_t length = sizeof value;
    EXPECT_EQ(::getsockopt(fd_, level, name, &value, &length), 0);
    return value;
  }
  int listener_ = -1;
  int fd_ = -1;
};

constexpr stats::TestNanos kMs = 1'000'000;

TEST_F(MarkOnSocket, ReceiveMarkFollowsTheRateWindowByWindow) {
  // A buffer as autotuning grows it on a fast path (8 MiB; past net.core.rmem_max, so as root).
  const int buffer = 4 << 20;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0)
    GTEST_SKIP() << "SO_RCVBUFFORCE needs CAP_NET_ADMIN";
  RateFollowingMark mark(Kind::receive_wakeup, kCall, true);
  mark.after_call(fd_, 5'000'000, 5 * kMs);  // inside the first window: nothing set yet
  EXPECT_EQ(option(SOL_SOCKET, SO_RCVLOWAT), 1);
  mark.after_call(fd_, 10'000'000, 10 * kMs);  // 1 GB/s over 10 ms: 1 MB a millisecond
  EXPECT_EQ(option(SOL_SOCKET, SO_RCVLOWAT), 512 * 1024);
  mark.after_call(fd_, 10'001'000, 20 * kMs);  // the sender slowed to 100 kB/s: per segment again
  EXPECT_EQ(option(SOL_SOCKET, SO_RCVLOWAT), 1);
}

TEST_F(MarkOnSocket, ReceiveMarkStaysWithinAQuarterOfTheReceiveBuffer) {
  // A fresh socket's buffer (tcp_rmem[1]) is far below four times the least batch: no mark, and
  // the buffer (so the window clamp) stays as it was.
  EXPECT_LT(option(SOL_SOCKET, SO_RCVBUF), 4 * 512 * 1024);
  const int small = 64 * 1024;
  ASSERT_EQ(::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
  RateFollowingMark mark(Kind::receive_wakeup, kCall, true);
  mark.after_call(fd_, 10'000'000, 10 * kMs);
  EXPECT_EQ(option(SOL_SOCKET, SO_RCVLOWAT), 1);
  EXPECT_EQ(option(SOL_SOCKET, SO_RCVBUF), 2 * small) << "the mark must not grow the buffer";
}

TEST_F(MarkOnSocket, SendMarkFollowsTheRate) {
  RateFollowingMark mark(Kind::send_backlog, 0, true);
  mark.after_call(fd_, 100'000'000, 10 * kMs);  // 10 GB/s: 10 MB a millisecond
  EXPECT_EQ(option(IPPROTO_TCP, TCP_NOTSENT_LOWAT), 8 << 20);
  mark.after_call(fd_, 100'010'000, 20 * kMs);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_NOTSENT_LOWAT), 1 << 20);
}

}  // namespace
}  // namespace testio::engines
