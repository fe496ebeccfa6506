// Memory for bulk data straight from the kernel (mmap), given back to it when destroyed (munmap).
// malloc keeps freed blocks of a few MiB for reuse once its mmap threshold has grown, so buffers
// a test made would stay resident after it; these never do. Owner: whoever holds it; the bytes
// are written by the one thread that reads into them.
#pragma once

#include <cstddef>

namespace testio::util {

class PageBuffer {
 public:
  PageBuffer() = default;
  // Throws std::bad_alloc when the kernel has no memory for it.
  explicit PageBuffer(std::size_t size);
  ~PageBuffer();
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;

  char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }

 private:
  void release() noexcept;

  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace testio::util
