// Which bytes a bulk sender hands the kernel next: bytes [0, quota) (quota 0: no limit) of a
// payload repeating every `payload_size` bytes, at most `chunk` per call. Shared by the engines'
// senders so each sends exactly the same bytes in the same calls.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace testio::engines {

class SendCursor {
 public:
  SendCursor(std::size_t payload_size, std::size_t chunk, std::uint64_t quota) noexcept
      : payload_size_(payload_size), chunk_(chunk), remaining_(quota), limited_(quota > 0) {}

  // Where the next call starts in the payload, and how many bytes it may send.
  std::size_t offset() const noexcept { return offset_; }
  std::size_t next_size() const noexcept {
    std::size_t size = std::min(chunk_, payload_size_ - offset_);
    if (limited_) size = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, size));
    return size;
  }
  // The kernel took `written` bytes from offset().
  void advance(std::size_t written) noexcept {
    offset_ += written;
    if (offset_ == payload_size_) offset_ = 0;
    if (limited_) remaining_ -= written;
    sent_ += written;
  }
  bool quota_sent() const noexcept { return limited_ && remaining_ == 0; }
  std::uint64_t sent() const noexcept { return sent_; }

 private:
  std::size_t payload_size_;
  std::size_t chunk_;
  std::size_t offset_ = 0;
  std::uint64_t remaining_;  // only meaningful when limited_
  bool limited_;
  std::uint64_t sent_ = 0;
};

}  // namespace testio::engines
