// A whole file mapped read-only: what a server serves to --transfers and what -F sends, without
// copying it through a buffer first. Owner: any thread; the mapping is immutable once open.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace testio::util {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws std::runtime_error with one sentence naming the file when it cannot be read.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  const char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  void release() noexcept;

  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// A whole file read into a string: a small one (/proc and /sys files, profiles, keys, a child's
// output), where a mapping is not worth it. nullopt when it cannot be opened (errno says why).
std::optional<std::string> read_whole_file(const std::string& path);

}  // namespace testio::util
