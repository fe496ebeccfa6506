#include "engines/uring_buffers.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <system_error>

namespace testio::engines {

ProvidedBuffers::ProvidedBuffers(io_uring& ring, char* memory, std::size_t size, unsigned entries)
    : ring_(ring), memory_(memory), size_(size), entries_(entries) {
  const std::size_t bytes = std::size_t{entries_} * sizeof(io_uring_buf);
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mapped == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mapping a buffer ring");
  buffers_ = static_cast<io_uring_buf_ring*>(mapped);
  io_uring_buf_reg registration{};
  registration.ring_addr = reinterpret_cast<std::uint64_t>(buffers_);
  registration.ring_entries = entries_;
  registration.bgid = kGroup;
  if (int result = io_uring_register_buf_ring(&ring_, &registration, 0); result < 0) {
    munmap(buffers_, bytes);
    throw std::system_error(-result, std::generic_category(), "registering a buffer ring");
  }
  io_uring_buf_ring_init(buffers_);
  const int mask = io_uring_buf_ring_mask(entries_);
  for (unsigned entry = 0; entry < entries_; ++entry)
    io_uring_buf_ring_add(buffers_, memory_, static_cast<unsigned>(size_), static_cast<unsigned short>(entry), mask,
                          static_cast<int>(entry));
  io_uring_buf_ring_advance(buffers_, static_cast<int>(entries_));
}

ProvidedBuffers::~ProvidedBuffers() {
  io_uring_unregister_buf_ring(&ring_, kGroup);
  munmap(buffers_, std::size_t{entries_} * sizeof(io_uring_buf));
}

void ProvidedBuffers::give_back(std::int32_t bytes) noexcept {
  // The entries are all alike and never rewritten, so moving the tail on returns them.
  const std::size_t used = bytes <= 0 ? 1 : (static_cast<std::size_t>(bytes) + size_ - 1) / size_;
  io_uring_buf_ring_advance(buffers_, static_cast<int>(used));
}

}  // namespace testio::engines

