// A provided-buffer ring for a worker's multishot receives (--engine uring, recv_into): the kernel
// picks each receive's buffer from it, so one receive stays queued per connection for the whole
// test instead of one submitted per completion.
//
// Every entry is the same buffer: the worker's scratch, which recv_into never reads (its bytes
// are counted, not looked at). So which entries a completion used never matters, only how many:
// the entries never change after setup, and giving buffers back is one store of the ring's tail.
// Owner: the worker's UringLoop; used on the worker's thread only.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>

namespace testio::engines {

class ProvidedBuffers {
 public:
  // The buffer group receives name in sqe->buf_group.
  static constexpr std::uint16_t kGroup = 1;

  // Registers a ring of `entries` (a power of two) entries, each `size` bytes at `memory`, with
  // `ring`. Throws std::system_error when the kernel refuses it (before Linux 5.19).
  ProvidedBuffers(io_uring& ring, char* memory, std::size_t size, unsigned entries);
  ~ProvidedBuffers();
  ProvidedBuffers(const ProvidedBuffers&) = delete;
  ProvidedBuffers& operator=(const ProvidedBuffers&) = delete;

  const char* memory() const noexcept { return memory_; }
  std::size_t size() const noexcept { return size_; }

  // A completion that used buffers (IORING_CQE_F_BUFFER) carried `bytes`: that many entries'
  // worth (a bundle fills each entry before the next) go back to the kernel.
  void give_back(std::int32_t bytes) noexcept;

 private:
  io_uring& ring_;
  char* memory_;
  std::size_t size_;
  unsigned entries_;
  io_uring_buf_ring* buffers_ = nullptr;
};

}  // namespace testio::engines
