#include "engines/uring_bulk.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace testio::engines {

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
  receive_next();
}

void UringReceiver::receive_next() {
  io_uring_prep_recv(&loop_.queue(*this), socket_.native_handle(), parts_.next_buffer(), parts_.read_size(),
                     parts_.flags());
  receiving_ = true;
}

void UringReceiver::complete(const io_uring_cqe& completion) {
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
