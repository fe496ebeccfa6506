#include "workloads/stream_parts.hpp"

#include <sys/socket.h>

namespace testio::workloads {

void SenderParts::took(std::size_t written, stats::TestNanos since_start) {
  counters->record(written, since_start);
  if (digest) digest->digest.update(next_data(), written);
  cursor.advance(written);
}

void SenderParts::finish(int fd, bool failed) {
  ::shutdown(fd, SHUT_WR);
  if (digest) *digest->out = digest->digest.finish();
  report_finished(*counters, failed, on_done);
}

ReceiverParts::ReceiverParts(stats::StreamCounters& counters, config::RecvMode mode, std::size_t buffer_size,
                             StreamDone on_done, std::optional<StreamDigest> digest)
    : counters_(counters),
      mode_(mode),
      buffer_size_(buffer_size),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)) {
  // for_overwrite: no zero-fill, so pages are only touched by the kernel's copy (never by trunc).
  if (mode_ != config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
}

char* ReceiverParts::next_buffer() {
  if (mode_ == config::RecvMode::recv) buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
  return buffer_.get();
}

int ReceiverParts::flags() const noexcept { return mode_ == config::RecvMode::trunc ? MSG_TRUNC : 0; }

void ReceiverParts::took(std::size_t received, stats::TestNanos since_start) {
  // (trunc copies nothing out, so a hashed test never uses it: the request parser refuses that.)
  if (digest_ && mode_ != config::RecvMode::trunc) digest_->digest.update(buffer_.get(), received);
  if (mode_ == config::RecvMode::recv) buffer_.reset();
  if (received) counters_.record(received, since_start);
}

void ReceiverParts::finish(bool failed) {
  if (mode_ == config::RecvMode::recv) buffer_.reset();
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

}  // namespace testio::workloads
