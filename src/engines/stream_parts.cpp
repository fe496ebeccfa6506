#include "engines/stream_parts.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>

namespace testio::engines {

std::size_t SendPacing::chunk(std::size_t buffer) const noexcept {
  if (rate_bps <= 0) return buffer;
  // 5 ms of data per call, between 4 KiB and the buffer.
  const auto five_ms = static_cast<std::size_t>(rate_bps / 8 * 0.005);
  return std::clamp<std::size_t>(five_ms, std::min<std::size_t>(4096, buffer), buffer);
}

Clock::time_point SendPacing::due(Clock::time_point start, std::uint64_t sent) const noexcept {
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(static_cast<double>(sent) * 8 / rate_bps));
}

void SenderParts::took(int fd, std::size_t written, stats::TestNanos since_start) {
  counters->record(written, since_start);
  if (digest) digest->digest.update(next_data(), written);
  cursor.advance(written);
  send_backlog.after_call(fd, counters->bytes.load(std::memory_order_relaxed), since_start);
}

void SenderParts::half_close(int fd) noexcept { ::shutdown(fd, SHUT_WR); }

void SenderParts::report(bool failed) {
  if (digest) *digest->out = digest->digest.finish();
  report_finished(*counters, failed, on_done);
}

ReceiverParts::ReceiverParts(stats::StreamCounters& counters, spec::RecvMode mode, std::size_t buffer_size,
                             StreamDone on_done, std::optional<StreamDigest> digest, bool follow_rate, char* scratch)
    : counters_(counters),
      mode_(mode),
      buffer_size_(buffer_size),
      scratch_(scratch),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)),
      wakeup_batch_(RateFollowingMark::Kind::receive_wakeup, buffer_size, follow_rate) {
  if (mode_ == spec::RecvMode::recv_into || mode_ == spec::RecvMode::trunc) read_into_one_buffer();
}

void ReceiverParts::read_into_one_buffer() {
  if (scratch_ && !digest_) {
    buffer_ = scratch_;
    return;
  }
  // Mapped, not zero-filled: pages are touched only by the kernel's copy (never by trunc).
  own_ = util::PageBuffer(buffer_size_);
  buffer_ = own_.data();
}

void ReceiverParts::read_into_buffer_instead() {
  mode_ = spec::RecvMode::recv_into;
  counts_copies_ = true;
  read_into_one_buffer();
}

char* ReceiverParts::next_buffer() {
  if (mode_ == spec::RecvMode::recv) {
    per_call_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
    buffer_ = per_call_.get();
  }
  return buffer_;
}

int ReceiverParts::flags() const noexcept { return mode_ == spec::RecvMode::trunc ? MSG_TRUNC : 0; }

void ReceiverParts::took(int fd, std::size_t received, stats::TestNanos since_start) {
  // (trunc copies nothing out, so a hashed test never uses it: spec/rules.cpp refuses that.)
  if (digest_ && mode_ != spec::RecvMode::trunc) digest_->digest.update(buffer_, received);
  if (mode_ == spec::RecvMode::recv) per_call_.reset();
  if (!received) return;
  counters_.record(received, since_start);
  if (counts_copies_) stats::add_relaxed(counters_.recv_copied_bytes, received);
  wakeup_batch_.after_call(fd, counters_.bytes.load(std::memory_order_relaxed), since_start);
}

void ReceiverParts::finish(bool failed) {
  if (mode_ == spec::RecvMode::recv) per_call_.reset();
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

}  // namespace testio::engines
