#include "workloads/blocking_stream.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "workloads/blocking_socket.hpp"
#include "workloads/zerocopy_completions.hpp"

namespace testio::workloads {

BlockingSender::BlockingSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
                               std::size_t payload_size, std::size_t chunk, std::uint64_t quota, StreamDone on_done,
                               std::optional<StreamDigest> digest, SendPacing pacing, SendSource source,
                               const BlockingSignals& signals)
    : socket_(std::move(socket)),
      counters_(counters),
      payload_(payload),
      cursor_(payload_size, chunk, quota),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)),
      pacing_(pacing),
      source_(source),
      signals_(signals) {}

ssize_t BlockingSender::send_next(int fd, std::size_t size) noexcept {
  switch (source_.mode) {
    case config::SendMode::send:
      return ::send(fd, payload_ + cursor_.offset(), size, MSG_NOSIGNAL);
    case config::SendMode::zerocopy: {
      ssize_t sent = ::send(fd, payload_ + cursor_.offset(), size, MSG_NOSIGNAL | MSG_ZEROCOPY);
      const int send_errno = errno;
      drain_zerocopy_completions(fd, counters_);
      errno = send_errno;
      return sent;
    }
    case config::SendMode::sendfile: {
      off_t position = static_cast<off_t>(source_.file_offset + cursor_.offset());
      ssize_t sent = ::sendfile(fd, source_.file_fd, &position, size);
      if (sent == 0) errno = EIO;  // the file is shorter than its part: nothing more to send
      return sent == 0 ? -1 : sent;
    }
  }
  return -1;
}

bool BlockingSender::wait_for_pace(const TestClock& clock) const {
  // Sleeps in slices, so the window's end and an abort are seen within one.
  const Clock::time_point due = pacing_.due(clock.start, cursor_.sent());
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
    if (pacing_.rate_bps > 0 && !wait_for_pace(clock)) continue;  // the checks above end the loop
    const ssize_t sent = send_next(fd, cursor_.next_size());
    if (sent < 0) {
      // ENOBUFS (zerocopy): too many notifications unread; they were read just now.
      if (timed_out(sent) || (source_.mode == config::SendMode::zerocopy && errno == ENOBUFS)) continue;
      failed = true;
      break;
    }
    counters_.record(static_cast<std::size_t>(sent), clock.since_start(Clock::now()));
    if (digest_) digest_->digest.update(payload_ + cursor_.offset(), static_cast<std::size_t>(sent));
    cursor_.advance(static_cast<std::size_t>(sent));
    if (cursor_.quota_sent()) break;
  }
  finish(failed);
}

void BlockingSender::finish(bool failed) {
  // Half-close: the receiver reads to EOF, so both ends count exactly the same bytes.
  ::shutdown(socket_.native_handle(), SHUT_WR);
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

void BlockingSender::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

BlockingReceiver::BlockingReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters,
                                   config::RecvMode mode, std::size_t buffer_size, StreamDone on_done,
                                   std::optional<StreamDigest> digest, const BlockingSignals& signals)
    : socket_(std::move(socket)),
      counters_(counters),
      mode_(mode),
      buffer_size_(buffer_size),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)),
      signals_(signals) {
  if (mode_ != config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
}

void BlockingReceiver::begin(const TestClock& clock) {
  const int fd = socket_.native_handle();
  make_blocking(fd);
  // MSG_TRUNC on a TCP socket makes tcp_recvmsg() drop the bytes without copying them out.
  const int flags = mode_ == config::RecvMode::trunc ? MSG_TRUNC : 0;
  bool failed = false;
  for (;;) {
    if (signals_.aborted.load(std::memory_order_relaxed)) {
      failed = true;
      break;
    }
    // recv: a fresh buffer per call, freed when the next replaces it, which is the point of that mode.
    if (mode_ == config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
    const ssize_t received = ::recv(fd, buffer_.get(), buffer_size_, flags);
    if (received == 0) break;  // EOF: the sender half-closed after its last byte
    if (received < 0) {
      if (timed_out(received)) continue;
      failed = true;
      break;
    }
    if (digest_ && mode_ != config::RecvMode::trunc) digest_->digest.update(buffer_.get(), static_cast<std::size_t>(received));
    counters_.record(static_cast<std::size_t>(received), clock.since_start(Clock::now()));
  }
  if (mode_ == config::RecvMode::recv) buffer_.reset();
  // The socket stays open until the stream is destroyed: the sampler may still read TCP_INFO.
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

void BlockingReceiver::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

}  // namespace testio::workloads
