#include "engines/zero_copy_receive.hpp"

#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "util/log.hpp"
#include "util/page_buffer.hpp"
#include "util/unique_fd.hpp"

namespace testio::engines {
namespace {

// Calls per drain before the reader yields: a sender faster than this receiver never lets the
// socket run dry, and the worker's other streams must still get their turn (recv_into gets the
// same fairness from Asio, which completes each read through the worker's queue).
constexpr int kCallsPerDrain = 16;

// The default pipe size, which needs no privilege (F_SETPIPE_SZ above fs.pipe-max-size does).
constexpr std::size_t kMinPipe = 64 * 1024;

std::string errno_text() { return std::strerror(errno); }

// splice(2): socket -> pipe -> /dev/null. The pages move by reference into the pipe and are
// dropped by /dev/null's splice_write, so no byte is copied to user space.
class SpliceReader final : public ZeroCopyReader {
 public:
  SpliceReader(util::UniqueFd read_end, util::UniqueFd write_end, util::UniqueFd null, std::size_t pipe_size)
      : read_end_(std::move(read_end)), write_end_(std::move(write_end)), null_(std::move(null)),
        pipe_size_(pipe_size) {}

  DrainEnd drain(int socket, ReceiveSink& sink) noexcept override {
    for (int call = 0; call < kCallsPerDrain; ++call) {
      // The pipe is empty here (each splice in is discarded whole), so EAGAIN means the socket's.
      ssize_t moved = ::splice(socket, nullptr, write_end_.get(), nullptr, pipe_size_,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (moved == 0) return DrainEnd::eof;
      if (moved < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return DrainEnd::would_block;
        if (!spliced_any_ && (errno == EINVAL || errno == ENOSYS)) return DrainEnd::unsupported;
        return DrainEnd::failed;
      }
      spliced_any_ = true;
      sink.zero_copy(nullptr, static_cast<std::size_t>(moved));
      if (!discard(static_cast<std::size_t>(moved))) return DrainEnd::failed;
    }
    return DrainEnd::more;
  }

 private:
  bool discard(std::size_t bytes) noexcept {
    while (bytes > 0) {
      ssize_t gone = ::splice(read_end_.get(), nullptr, null_.get(), nullptr, bytes, SPLICE_F_MOVE);
      if (gone < 0 && errno == EINTR) continue;
      if (gone <= 0) return false;
      bytes -= static_cast<std::size_t>(gone);
    }
    return true;
  }

  util::UniqueFd read_end_, write_end_, null_;
  std::size_t pipe_size_;
  bool spliced_any_ = false;
};

// A pipe as close to `buffer` bytes as this process may make it: halving from there while the
// kernel says no (fs.pipe-max-size, or the user's pipe page quota), never below the default.
std::size_t size_pipe(int pipe, std::size_t buffer) noexcept {
  std::size_t want = std::clamp<std::size_t>(buffer, kMinPipe, 1u << 30);
  while (want > kMinPipe && ::fcntl(pipe, F_SETPIPE_SZ, static_cast<int>(want)) < 0) want /= 2;
  int granted = ::fcntl(pipe, F_GETPIPE_SZ);
  return granted > 0 ? static_cast<std::size_t>(granted) : kMinPipe;
}

std::unique_ptr<ZeroCopyReader> make_splice_reader(std::size_t buffer) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    warn_fallback(spec::RecvMode::splice, ("no pipe: " + errno_text()).c_str());
    return nullptr;
  }
  util::UniqueFd read_end(ends[0]), write_end(ends[1]);
  util::UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  if (!null.valid()) {
    warn_fallback(spec::RecvMode::splice, ("cannot open /dev/null: " + errno_text()).c_str());
    return nullptr;
  }
  std::size_t pipe_size = size_pipe(write_end.get(), buffer);
  return std::make_unique<SpliceReader>(std::move(read_end), std::move(write_end), std::move(null), pipe_size);
}

// TCP_ZEROCOPY_RECEIVE, as the kernel's tools/testing/selftests/net/tcp_mmap.c uses it: each call
// maps the whole pages of payload at the head of the receive queue into a read-only window of the
// socket's own mapping; what cannot be mapped (data not on page boundaries, a tail shorter than a
// page) the kernel names in recv_skip_hint, and that is read with a plain recv into a buffer.
class MappedReader final : public ZeroCopyReader {
 public:
  // `copy`: where recv_skip_hint's bytes are read to (the worker's buffer: a drain reads and counts
  // them before it returns, so no other stream reuses it meanwhile); null: a buffer of its own.
  MappedReader(void* window, std::size_t window_size, std::size_t copy_size, char* copy)
      : window_(static_cast<char*>(window)), window_size_(window_size),
        own_copy_(copy ? 0 : copy_size), copy_(copy ? copy : own_copy_.data()), copy_size_(copy_size) {}
  ~MappedReader() override { ::munmap(window_, window_size_); }
  MappedReader(const MappedReader&) = delete;
  MappedReader& operator=(const MappedReader&) = delete;

  DrainEnd drain(int socket, ReceiveSink& sink) noexcept override {
    for (int call = 0; call < kCallsPerDrain; ++call) {
      tcp_zerocopy_receive request{};
      request.address = reinterpret_cast<std::uintptr_t>(window_);
      request.length = static_cast<std::uint32_t>(window_size_);
      socklen_t length = sizeof request;
      // EIO: the queue is empty and the peer has closed; the recv below reads that EOF (or error).
      if (::getsockopt(socket, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &request, &length) < 0) {
        if (errno == EINTR) continue;
        if (!called_ && (errno == EOPNOTSUPP || errno == ENOPROTOOPT || errno == EINVAL))
          return DrainEnd::unsupported;
        if (errno != EIO) return DrainEnd::failed;
        request.length = 0;
        request.recv_skip_hint = 0;
      }
      called_ = true;
      // The pages stay mapped until the next call, which unmaps the range it maps into first: one
      // madvise(MADV_DONTNEED) per call saved.
      if (request.length > 0) sink.zero_copy(window_, request.length);
      std::size_t to_copy = request.recv_skip_hint;
      // Nothing mapped and nothing to skip: the queue is empty or at EOF, which only recv tells.
      if (request.length == 0 && to_copy == 0) to_copy = copy_size_;
      if (to_copy == 0) continue;
      ssize_t got = ::recv(socket, copy_, std::min(to_copy, copy_size_), MSG_DONTWAIT);
      if (got == 0) return DrainEnd::eof;
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return DrainEnd::would_block;
        return DrainEnd::failed;
      }
      sink.copied(copy_, static_cast<std::size_t>(got));
    }
    return DrainEnd::more;
  }

 private:
  char* window_;
  std::size_t window_size_;
  util::PageBuffer own_copy_;
  char* copy_;  // for recv_skip_hint
  std::size_t copy_size_;
  bool called_ = false;
};

std::unique_ptr<ZeroCopyReader> make_mapped_reader(int socket, std::size_t buffer, char* copy) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  // Whole pages only; the kernel maps at most what fits in 32 bits per call.
  const std::size_t window_size = std::min<std::size_t>((buffer + page - 1) / page * page, 1u << 30);
  void* window = ::mmap(nullptr, window_size, PROT_READ, MAP_SHARED, socket, 0);
  if (window == MAP_FAILED) {
    warn_fallback(spec::RecvMode::mmap, ("the socket cannot be mapped: " + errno_text()).c_str());
    return nullptr;
  }
  return std::make_unique<MappedReader>(window, window_size, buffer, copy);
}

}  // namespace

void ReceiveSink::count(std::atomic<std::uint64_t>& kind, const char* data, std::size_t bytes) noexcept {
  counters.record(bytes, clock.since_start(Clock::now()));
  stats::add_relaxed(kind, bytes);
  if (digest && data) digest->update(data, bytes);
}

void ReceiveSink::zero_copy(const char* data, std::size_t bytes) noexcept {
  count(counters.recv_zerocopy_bytes, data, bytes);
}

void ReceiveSink::copied(const char* data, std::size_t bytes) noexcept {
  count(counters.recv_copied_bytes, data, bytes);
}

std::unique_ptr<ZeroCopyReader> make_zero_copy_reader(spec::RecvMode mode, int socket, std::size_t buffer,
                                                      char* copy) {
  switch (mode) {
    case spec::RecvMode::splice: return make_splice_reader(buffer);
    case spec::RecvMode::mmap: return make_mapped_reader(socket, buffer, copy);
    case spec::RecvMode::recv:
    case spec::RecvMode::recv_into:
    case spec::RecvMode::trunc: break;
  }
  return nullptr;
}

void warn_fallback(spec::RecvMode mode, const char* why) {
  static std::atomic<bool> warned_splice{false}, warned_mmap{false};
  std::atomic<bool>& warned = mode == spec::RecvMode::splice ? warned_splice : warned_mmap;
  if (warned.exchange(true)) return;
  util::log_warn("--recv-mode {} is not available here ({}); reading with recv_into instead, counted as copied",
               spec::to_string(mode), why);
}

}  // namespace testio::engines
