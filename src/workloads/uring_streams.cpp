#include "workloads/uring_streams.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace testio::workloads {

UringSender::UringSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
                         std::size_t payload_size, std::size_t chunk, std::uint64_t quota, StreamDone on_done,
                         std::optional<StreamDigest> digest, SendPacing pacing, SendSource source, UringLoop& loop)
    : socket_(std::move(socket)),
      counters_(counters),
      payload_(payload),
      cursor_(payload_size, chunk, quota),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)),
      pacing_(pacing),
      source_(source),
      loop_(loop) {
  loop_.add(*this);
}

void UringSender::start(const TestClock& clock) {
  clock_ = clock;
  send_next();
}

void UringSender::send_next() {
  const std::size_t size = cursor_.next_size();
  io_uring_sqe& entry = loop_.queue(*this);
  const char* data = payload_ + cursor_.offset();
  if (source_.mode == config::SendMode::zerocopy) {
#ifdef IORING_SEND_ZC_REPORT_USAGE
    // The notification then says whether the kernel copied after all (it does on loopback).
    io_uring_prep_send_zc(&entry, socket_.native_handle(), data, size, MSG_NOSIGNAL, IORING_SEND_ZC_REPORT_USAGE);
#else
    io_uring_prep_send_zc(&entry, socket_.native_handle(), data, size, MSG_NOSIGNAL, 0);
#endif
  } else {
    io_uring_prep_send(&entry, socket_.native_handle(), data, size, MSG_NOSIGNAL);
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
    counters_.record_zerocopy(1, copied ? 1 : 0);
    return;
  }
  sending_ = false;
  if (finished_) return;
  if (completion.res <= 0) {
    // ECANCELED at the window's end: the send handed the kernel nothing, so the count is exact.
    finish(aborting_ || !(completion.res == -ECANCELED && window_over_));
    return;
  }
  const auto written = static_cast<std::size_t>(completion.res);
  const Clock::time_point now = Clock::now();
  counters_.record(written, clock_.since_start(now));
  if (digest_) digest_->digest.update(payload_ + cursor_.offset(), written);
  cursor_.advance(written);
  if (aborting_ || cursor_.quota_sent() || window_over_ || now >= clock_.deadline) {
    finish(aborting_);
    return;
  }
  if (pacing_.rate_bps > 0) {
    const Clock::time_point due = pacing_.due(clock_.start, cursor_.sent());
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
  // A paused stream stays in the loop's pause list until its time; resume() then finds it ended.
  // Half-close: the receiver reads to EOF, so both ends count exactly the same bytes.
  ::shutdown(socket_.native_handle(), SHUT_WR);
  if (digest_) *digest_->out = digest_->digest.finish();
  loop_.stream_ended();
  report_finished(counters_, failed, on_done_);
}

void UringSender::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

UringReceiver::UringReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters, config::RecvMode mode,
                             std::size_t buffer_size, StreamDone on_done, std::optional<StreamDigest> digest,
                             UringLoop& loop)
    : socket_(std::move(socket)),
      counters_(counters),
      mode_(mode),
      buffer_size_(buffer_size),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)),
      loop_(loop) {
  if (mode_ != config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
  loop_.add(*this);
}

void UringReceiver::start(const TestClock& clock) {
  clock_ = clock;
  receive_next();
}

void UringReceiver::receive_next() {
  // recv: a fresh buffer per operation, freed when it completes, which is the point of that mode.
  if (mode_ == config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
  // MSG_TRUNC on a TCP socket makes tcp_recvmsg() drop the bytes without copying them out.
  const int flags = mode_ == config::RecvMode::trunc ? MSG_TRUNC : 0;
  io_uring_prep_recv(&loop_.queue(*this), socket_.native_handle(), buffer_.get(), buffer_size_, flags);
  receiving_ = true;
}

void UringReceiver::complete(const io_uring_cqe& completion) {
  receiving_ = false;
  if (finished_) return;
  if (completion.res <= 0) {
    if (mode_ == config::RecvMode::recv) buffer_.reset();
    finish(completion.res < 0 || aborting_);  // 0: EOF, the sender half-closed after its last byte
    return;
  }
  const auto received = static_cast<std::size_t>(completion.res);
  if (digest_ && mode_ != config::RecvMode::trunc) digest_->digest.update(buffer_.get(), received);
  if (mode_ == config::RecvMode::recv) buffer_.reset();
  counters_.record(received, clock_.since_start(Clock::now()));
  if (aborting_) {
    finish(true);
    return;
  }
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
  // The socket stays open until the stream is destroyed: the sampler may still read TCP_INFO.
  if (digest_) *digest_->out = digest_->digest.finish();
  loop_.stream_ended();
  report_finished(counters_, failed, on_done_);
}

void UringReceiver::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

}  // namespace testio::workloads
