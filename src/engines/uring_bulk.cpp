#include "engines/uring_bulk.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace testio::engines {
namespace {

// IORING_RECVSEND_BUNDLE (Linux 6.10: one receive completion spans several buffers), newer than
// the headers Debian 12 builds with.
constexpr unsigned kRecvSendBundle = 1U << 4;
// The size of each provided buffer. A pass takes up to -l bytes, a bundle of these, every one the
// same 64 KiB of the worker's buffer, which stays in the core's cache: measured against entries
// of -l (2 MiB), 32 connections 57.2 -> 62.4 Gbit/s and 0.079 -> 0.061 receiver CPU-s/GB
// (docs/engines.md).
constexpr std::size_t kBundleEntry = 64 * 1024;

}  // namespace

UringSender::UringSender(asio::ip::tcp::socket socket, SenderParts parts, UringLoop& loop)
    : socket_(std::move(socket)), parts_(std::move(parts)), loop_(loop) {
  loop_.add(*this);
}

void UringSender::start(const TestClock& clock) {
  clock_ = clock;
  send_next();
}

void UringSender::send_next() {
  const std::size_t size = parts_.cursor.next_size();
  queued_size_ = size;
  io_uring_sqe& entry = loop_.queue(*this);
  if (parts_.source.mode == spec::SendMode::zerocopy) {
#ifdef IORING_SEND_ZC_REPORT_USAGE
    // The notification then says whether the kernel copied after all (it does on loopback).
    io_uring_prep_send_zc(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL,
                          IORING_SEND_ZC_REPORT_USAGE);
#else
    io_uring_prep_send_zc(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL, 0);
#endif
  } else {
    io_uring_prep_send(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL);
  }
  // Each send waits for room in its socket before its first try, unless it is paced (a paced send
  // finds the buffer nearly empty) and the last was not short. Tried inline, a round of sends
  // copies them all inside one io_uring_enter, far beyond the caches, while the sockets are
  // mostly full; polling first sends each as its socket drains, as epoll does. 1,024 connections
  // 46.4 -> 54.6 Gbit/s (medians of 5; asio 55.9), level at 1 and 32 (docs/engines.md).
  if (loop_.polls_first() && (socket_was_full_ || parts_.pacing.rate_bps <= 0))
    entry.ioprio |= IORING_RECVSEND_POLL_FIRST;
  sending_ = true;
}

void UringSender::complete(const io_uring_cqe& completion) {
  if (completion.flags & IORING_CQE_F_NOTIF) {
    // A zero-copy send's notification: the kernel is done with its bytes.
#ifdef IORING_NOTIF_USAGE_ZC_COPIED
    const bool copied = static_cast<std::uint32_t>(completion.res) & IORING_NOTIF_USAGE_ZC_COPIED;
#else
    const bool copied = false;  // these headers cannot ask
#endif
    parts_.counters->record_zerocopy(1, copied ? 1 : 0);
    return;
  }
  sending_ = false;
  if (finished_) return;
  if (completion.res <= 0) {
    // ECANCELED at the window's end: the send handed the kernel nothing, so the count is exact.
    finish(aborting_ || !(completion.res == -ECANCELED && window_over_));
    return;
  }
  const Clock::time_point now = Clock::now();
  socket_was_full_ = static_cast<std::size_t>(completion.res) < queued_size_;
  parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(now));
  if (aborting_ || parts_.cursor.quota_sent() || window_over_ || now >= clock_.deadline) {
    finish(aborting_);
    return;
  }
  if (parts_.pacing.rate_bps > 0) {
    const Clock::time_point due = parts_.pacing.due(clock_.start, parts_.cursor.sent());
    if (due > now) {
      loop_.pause(*this, due);
      return;
    }
  }
  send_next();
}

void UringSender::window_ended() {
  if (finished_) return;
  window_over_ = true;
  if (sending_)
    loop_.cancel(*this);  // its completion ends the stream
  else
    finish(false);  // paused for its pace
}

void UringSender::abort() {
  if (finished_) return;
  aborting_ = true;
  if (sending_)
    loop_.cancel(*this);
  else
    finish(true);
}

void UringSender::finish(bool failed) {
  finished_ = true;
  loop_.stream_ended();
  parts_.finish(socket_.native_handle(), failed);
}

void UringSender::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

UringReceiver::UringReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, UringLoop& loop)
    : socket_(std::move(socket)), parts_(std::move(parts)), loop_(loop) {
  loop_.add(*this);
}

void UringReceiver::start(const TestClock& clock) {
  clock_ = clock;
  if (parts_.mode() == spec::RecvMode::recv_into && parts_.scratch() && parts_.next_buffer() == parts_.scratch())
    buffers_ = loop_.receive_buffers(parts_.scratch(), std::min(parts_.buffer_size(), kBundleEntry));
  if (buffers_)
    receive_many();
  else
    receive_next();
}

void UringReceiver::receive_many() {
  io_uring_sqe& entry = loop_.queue(*this);
  // The length caps what one pass takes before the kernel moves on to the worker's other sockets
  // (Linux 6.17; a bundle only): without it a pass drains its socket 32 times over while data comes.
  io_uring_prep_recv(&entry, socket_.native_handle(), nullptr, static_cast<std::uint32_t>(parts_.buffer_size()), 0);
  entry.ioprio |= IORING_RECV_MULTISHOT | kRecvSendBundle;
  entry.flags |= IOSQE_BUFFER_SELECT;
  entry.buf_group = ProvidedBuffers::kGroup;
  receiving_ = true;
  received_multishot_ = false;
}

void UringReceiver::complete_many(const io_uring_cqe& completion) {
  if (completion.flags & IORING_CQE_F_BUFFER) buffers_->give_back(completion.res);
  const bool more = completion.flags & IORING_CQE_F_MORE;
  if (!more) receiving_ = false;
  if (finished_) return;
  if (completion.res > 0) {
    received_multishot_ = true;
    parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(Clock::now()));
    if (aborting_)
      finish(true);
    else if (!more)
      receive_many();  // the kernel ended it (its completion queue was full, say): queue it again
    return;
  }
  if (more) return;
  if (aborting_) {
    finish(true);
    return;
  }
  if (completion.res == -ENOBUFS) {
    receive_many();  // the buffer ring ran dry within one wait; the completions gave them back
    return;
  }
  if (completion.res == -EINVAL && !received_multishot_) {
    // Before Linux 6.17 a multishot receive takes no length: this worker receives one at a time.
    loop_.no_multishot_receives("this kernel cannot cap what a multishot receive takes per pass (Linux 6.17 can)");
    buffers_ = nullptr;
    receive_next();
    return;
  }
  finish(completion.res < 0);  // 0: EOF, the sender half-closed after its last byte
}

void UringReceiver::receive_next() {
  io_uring_prep_recv(&loop_.queue(*this), socket_.native_handle(), parts_.next_buffer(), parts_.read_size(),
                     parts_.flags());
  receiving_ = true;
}

void UringReceiver::complete(const io_uring_cqe& completion) {
  if (buffers_) {
    complete_many(completion);
    return;
  }
  receiving_ = false;
  if (finished_) return;
  if (completion.res <= 0) {
    finish(completion.res < 0 || aborting_);  // 0: EOF, the sender half-closed after its last byte
    return;
  }
  parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(Clock::now()));
  if (aborting_)
    finish(true);
  else
    receive_next();
}

void UringReceiver::abort() {
  if (finished_) return;
  aborting_ = true;
  if (receiving_)
    loop_.cancel(*this);
  else
    finish(true);
}

void UringReceiver::finish(bool failed) {
  finished_ = true;
  loop_.stream_ended();
  parts_.finish(failed);
}

void UringReceiver::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

}  // namespace testio::engines
