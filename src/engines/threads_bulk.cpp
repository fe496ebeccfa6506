#include "engines/threads_bulk.hpp"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include <asio/ip/tcp.hpp>

#include "engines/blocking_socket.hpp"
#include "engines/zerocopy_completions.hpp"

namespace testio::engines {

class BlockingSender final : public StreamTask {
 public:
  // `signals` are the worker's, which the loop checks between calls.
  BlockingSender(asio::ip::tcp::socket socket, SenderParts parts, const BlockingSignals& signals);

  // Runs the whole send loop, then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  // Bytes the kernel took, or -1 with errno set.
  ssize_t send_next(int fd, std::size_t size) noexcept;
  // False when the loop should stop: the window ended or the worker is aborting.
  bool wait_for_pace(const TestClock& clock) const;

  asio::ip::tcp::socket socket_;
  SenderParts parts_;
  const BlockingSignals& signals_;
};

class BlockingReceiver final : public StreamTask {
 public:
  BlockingReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, const BlockingSignals& signals);

  // Reads to EOF (or until the worker aborts), then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  const BlockingSignals& signals_;
};

BlockingSender::BlockingSender(asio::ip::tcp::socket socket, SenderParts parts, const BlockingSignals& signals)
    : socket_(std::move(socket)), parts_(std::move(parts)), signals_(signals) {}

ssize_t BlockingSender::send_next(int fd, std::size_t size) noexcept {
  switch (parts_.source.mode) {
    case spec::SendMode::send:
      return ::send(fd, parts_.next_data(), size, MSG_NOSIGNAL);
    case spec::SendMode::zerocopy: {
      ssize_t sent = ::send(fd, parts_.next_data(), size, MSG_NOSIGNAL | MSG_ZEROCOPY);
      const int send_errno = errno;
      drain_zerocopy_completions(fd, *parts_.counters);
      errno = send_errno;
      return sent;
    }
    case spec::SendMode::sendfile: {
      off_t position = static_cast<off_t>(parts_.source.file_offset + parts_.cursor.offset());
      ssize_t sent = ::sendfile(fd, parts_.source.file_fd, &position, size);
      if (sent == 0) errno = EIO;  // the file is shorter than its part: nothing more to send
      return sent == 0 ? -1 : sent;
    }
  }
  return -1;
}

bool BlockingSender::wait_for_pace(const TestClock& clock) const {
  // Sleeps in slices, so the window's end and an abort are seen within one.
  const Clock::time_point due = parts_.pacing.due(clock.start, parts_.cursor.sent());
  for (Clock::time_point now = Clock::now(); now < due; now = Clock::now()) {
    if (signals_.window_closed.load(std::memory_order_relaxed) || signals_.aborted.load(std::memory_order_relaxed) ||
        now >= clock.deadline)
      return false;
    std::this_thread::sleep_until(std::min({due, now + kBlockingCallLimit, clock.deadline}));
  }
  return true;
}

void BlockingSender::begin(const TestClock& clock) {
  const int fd = socket_.native_handle();
  make_blocking(fd);
  bool near_deadline = false;
  bool failed = false;
  for (;;) {
    if (signals_.aborted.load(std::memory_order_relaxed)) {
      failed = true;
      break;
    }
    if (signals_.window_closed.load(std::memory_order_relaxed)) break;
    const Clock::time_point now = Clock::now();
    if (now >= clock.deadline) break;
    if (!near_deadline && clock.deadline - now < kBlockingCallLimit) {
      // A blocked call returns what it sent when its timeout expires: end it at the deadline.
      near_deadline = true;
      set_send_limit(fd, std::chrono::duration_cast<std::chrono::microseconds>(clock.deadline - now));
    }
    if (parts_.pacing.rate_bps > 0 && !wait_for_pace(clock)) continue;  // the checks above end the loop
    const ssize_t sent = send_next(fd, parts_.cursor.next_size());
    if (sent < 0) {
      // ENOBUFS (zerocopy): too many notifications unread; they were read just now.
      if (timed_out(sent) || (parts_.source.mode == spec::SendMode::zerocopy && errno == ENOBUFS)) continue;
      failed = true;
      break;
    }
    parts_.took(fd, static_cast<std::size_t>(sent), clock.since_start(Clock::now()));
    if (parts_.cursor.quota_sent()) break;
  }
  parts_.finish(fd, failed);
}

void BlockingSender::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

BlockingReceiver::BlockingReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, const BlockingSignals& signals)
    : socket_(std::move(socket)), parts_(std::move(parts)), signals_(signals) {}

void BlockingReceiver::begin(const TestClock& clock) {
  const int fd = socket_.native_handle();
  make_blocking(fd);
  bool failed = false;
  for (;;) {
    if (signals_.aborted.load(std::memory_order_relaxed)) {
      failed = true;
      break;
    }
    const ssize_t received = ::recv(fd, parts_.next_buffer(), parts_.read_size(), parts_.flags());
    if (received < 0 && timed_out(received)) continue;
    if (received <= 0) {
      failed = received < 0;  // 0: EOF, the sender half-closed after its last byte
      break;
    }
    parts_.took(fd, static_cast<std::size_t>(received), clock.since_start(Clock::now()));
  }
  parts_.finish(failed);
}

void BlockingReceiver::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

namespace {

timeval to_timeval(std::chrono::microseconds limit) noexcept {
  // A zero timeval would mean "block for ever".
  const auto micros = std::max<std::chrono::microseconds::rep>(limit.count(), 1);
  return timeval{static_cast<time_t>(micros / 1'000'000), static_cast<suseconds_t>(micros % 1'000'000)};
}

}  // namespace

void make_blocking(int fd, std::chrono::microseconds limit) noexcept {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const timeval timeout = to_timeval(limit);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

void set_send_limit(int fd, std::chrono::microseconds limit) noexcept {
  const timeval timeout = to_timeval(limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

bool timed_out(ssize_t result) noexcept {
  return result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

std::unique_ptr<StreamTask> make_blocking_sender(asio::ip::tcp::socket socket, SenderParts parts,
                                                 const BlockingSignals& signals) {
  return std::make_unique<BlockingSender>(std::move(socket), std::move(parts), signals);
}

std::unique_ptr<StreamTask> make_blocking_receiver(asio::ip::tcp::socket socket, ReceiverParts parts,
                                                   const BlockingSignals& signals) {
  return std::make_unique<BlockingReceiver>(std::move(socket), std::move(parts), signals);
}

}  // namespace testio::engines
