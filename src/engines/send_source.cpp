#include "engines/send_source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "util/pattern.hpp"

namespace testio::engines {

util::UniqueFd open_send_file(const std::string& file, std::size_t block, bool repeating_digits) {
  if (!file.empty()) {
    util::UniqueFd opened(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (!opened.valid()) throw std::runtime_error("cannot read " + file + ": " + std::strerror(errno));
    return opened;
  }
  util::UniqueFd memfd(::memfd_create("testio-payload", MFD_CLOEXEC));
  if (!memfd.valid()) throw std::runtime_error(std::string("memfd_create failed: ") + std::strerror(errno));
  util::PageBuffer pattern = util::make_pattern(block, repeating_digits);
  for (std::size_t written = 0; written < block;) {
    ssize_t n = ::write(memfd.get(), pattern.data() + written, block - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("writing the sendfile memfd failed: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  return memfd;
}

bool enable_zerocopy(int socket) noexcept {
  int on = 1;
  return ::setsockopt(socket, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) == 0;
}

}  // namespace testio::engines
