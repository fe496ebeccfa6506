// --recv-mode splice and mmap: the two receive paths that keep the payload out of a user buffer.
// A reader drains a readable, non-blocking socket until the kernel has nothing more, counting each
// call as the other modes do; the TcpReceiver waits for readability in between. Owner: the
// receiver's worker thread.
#pragma once

#include <cstddef>
#include <memory>

#include "spec/test_spec.hpp"
#include "stats/counters.hpp"
#include "util/digest.hpp"
#include "engines/stream_task.hpp"

namespace testio::engines {

// Where a drain stopped.
enum class DrainEnd {
  would_block,  // the socket is empty: wait until it is readable again
  more,         // the call budget ran out with data left: let the worker's other streams run first
  eof,          // the peer half-closed and every byte before its FIN is counted
  failed,       // a system call failed (errno)
  unsupported,  // the kernel refused the mode on its first call: read with recv_into instead
};

// What a drain counts into (and hashes into, for -F).
struct ReceiveSink {
  stats::StreamCounters& counters;
  const TestClock& clock;
  util::Digest* digest = nullptr;

  // `data` is null where the bytes never reach this process (splice), so nothing can hash them.
  void zero_copy(const char* data, std::size_t bytes) noexcept;
  void copied(const char* data, std::size_t bytes) noexcept;

 private:
  void count(std::atomic<std::uint64_t>& kind, const char* data, std::size_t bytes) noexcept;
};

class ZeroCopyReader {
 public:
  virtual ~ZeroCopyReader() = default;
  // Calls the kernel until the socket is empty, at EOF, on an error, or after a fixed number of
  // calls. Never allocates, locks or logs.
  virtual DrainEnd drain(int socket, ReceiveSink& sink) noexcept = 0;
};

// The reader for `mode` (splice or mmap) on `socket`, reading about `buffer` bytes per call; null
// for any other mode, or (after one warning per process) where the kernel cannot do it here: the
// receiver then reads with recv_into and counts every byte as copied.
// `copy` (may be null) is the worker's buffer, for what mmap copies.
std::unique_ptr<ZeroCopyReader> make_zero_copy_reader(spec::RecvMode mode, int socket, std::size_t buffer,
                                                      char* copy = nullptr);

// Says once per process, and per mode, that `mode` fell back to recv_into, and why.
void warn_fallback(spec::RecvMode mode, const char* why);

}  // namespace testio::engines
