#include "engines/blocking_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>

namespace testio::engines {
namespace {

timeval to_timeval(std::chrono::microseconds limit) noexcept {
  // A zero timeval would mean "block for ever".
  const auto micros = std::max<std::chrono::microseconds::rep>(limit.count(), 1);
  return timeval{static_cast<time_t>(micros / 1'000'000), static_cast<suseconds_t>(micros % 1'000'000)};
}

}  // namespace

void make_blocking(int fd, std::chrono::microseconds limit) noexcept {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const timeval timeout = to_timeval(limit);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

void set_send_limit(int fd, std::chrono::microseconds limit) noexcept {
  const timeval timeout = to_timeval(limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

bool timed_out(ssize_t result) noexcept {
  return result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

}  // namespace testio::engines
