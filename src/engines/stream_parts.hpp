// What a bulk sender or receiver of any engine holds besides its socket and its
// engine's own state: its counters, its bytes or buffer, its digest and whom to tell when it ends;
// and the steps every engine takes with them after each call, so the engines count alike.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "spec/test_spec.hpp"
#include "stats/counters.hpp"
#include "util/digest.hpp"
#include "util/page_buffer.hpp"
#include "engines/send_cursor.hpp"
#include "engines/rate_following_mark.hpp"
#include "engines/stream_task.hpp"
#include "engines/zero_copy_receive.hpp"

namespace testio::engines {

// -F: a stream hashes every byte it hands to (or takes from) the kernel and leaves the hex digest
// in `*out` before it reports itself finished. `out` outlives the stream.
struct StreamDigest {
  util::Digest digest;
  std::string* out = nullptr;
};

// -b: a sender keeps the bytes it has written at or below rate x time since the start, in calls
// of at most chunk() bytes so the rate holds within a few milliseconds.
struct SendPacing {
  double rate_bps = 0;  // 0: as fast as the socket takes it
  std::size_t chunk(std::size_t buffer) const noexcept;
  // When a sender that has written `sent` bytes since `start` may write again (rate_bps > 0).
  Clock::time_point due(Clock::time_point start, std::uint64_t sent) const noexcept;
};

// Where a sender's bytes come from for each send mode. `file_fd` (sendfile) holds the payload at
// `file_offset`: the -F file with this stream's part, or a memfd with the generated block.
struct SendSource {
  spec::SendMode mode = spec::SendMode::send;
  int file_fd = -1;
  std::uint64_t file_offset = 0;
};

struct SenderParts {
  stats::StreamCounters* counters;
  const char* payload;
  SendCursor cursor;
  StreamDone on_done;
  std::optional<StreamDigest> digest;
  SendPacing pacing;
  SendSource source;
  RateFollowingMark send_backlog;
  bool await_peer_close = false;  // see SenderSpec

  const char* next_data() const noexcept { return payload + cursor.offset(); }
  // The kernel took `written` bytes from next_data() on `fd`: count them, hash them, move on; the
  // socket's unsent backlog follows the rate.
  void took(int fd, std::size_t written, stats::TestNanos since_start);
  // Half-closes `fd` (the receiver reads to EOF, so both ends count the same bytes), leaves the
  // digest and reports the stream finished.
  void finish(int fd, bool failed) {
    half_close(fd);
    report(failed);
  }
  // The two steps apart, for a sender that waits for its peer to close between them.
  static void half_close(int fd) noexcept;
  void report(bool failed);
};

class ReceiverParts {
 public:
  // `scratch`: the worker's buffer, which recv_into and trunc read into unless they hash what they
  // read (their digest needs the bytes after the call, when another stream may have reused it);
  // null: the stream holds its own.
  ReceiverParts(stats::StreamCounters& counters, spec::RecvMode mode, std::size_t buffer_size, StreamDone on_done,
                std::optional<StreamDigest> digest, bool follow_rate, char* scratch = nullptr);

  spec::RecvMode mode() const noexcept { return mode_; }
  // Where the next call reads to: recv allocates a fresh buffer per call (the point of that
  // mode); recv_into and trunc reuse the worker's, or one of the connection's own when hashing.
  char* next_buffer();
  std::size_t buffer_size() const noexcept { return buffer_size_; }
  // The bytes the next call asks for. A receiver woken for a batch reads it in pieces of at most
  // kBatchedRead: the batch is fresh from the sender's copy, and copying it out in pieces that stay
  // in the core's own cache costs less than one copy the size of -l. Among many connections (no
  // batch) the queues are deep and old, and fewer, larger calls cost less.
  std::size_t read_size() const noexcept {
    return wakeup_batch_.follows() ? std::min(buffer_size_, kBatchedRead) : buffer_size_;
  }
  static constexpr std::size_t kBatchedRead = 256 * 1024;
  char* scratch() const noexcept { return scratch_; }
  // MSG_TRUNC for trunc: tcp_recvmsg() then drops the bytes without copying them out.
  int flags() const noexcept;
  // A call on `fd` read `received` bytes (0: EOF) into next_buffer()'s buffer; a recv buffer is
  // freed, and the socket's wakeup batch follows the rate.
  void took(int fd, std::size_t received, stats::TestNanos since_start);
  // splice and mmap: what their readers count and hash into.
  ReceiveSink sink(const TestClock& clock) noexcept {
    return ReceiveSink{counters_, clock, digest_ ? &digest_->digest : nullptr};
  }
  // splice or mmap cannot run here: read with recv_into from now on, counting every byte as
  // copied, so the report shows a zero-copy share of 0 rather than none.
  void read_into_buffer_instead();
  // Leaves the digest and reports the stream finished. The socket stays open until the stream
  // is destroyed: the sampler may still read TCP_INFO by its descriptor.
  void finish(bool failed);

 private:
  void read_into_one_buffer();

  stats::StreamCounters& counters_;
  spec::RecvMode mode_;
  std::size_t buffer_size_;
  char* scratch_;                        // the worker's, or null
  util::PageBuffer own_;                 // recv_into and trunc when hashing, or without scratch
  std::unique_ptr<char[]> per_call_;     // recv: this call's
  char* buffer_ = nullptr;               // where the current call reads to
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
  bool counts_copies_ = false;
  RateFollowingMark wakeup_batch_;
};

}  // namespace testio::engines
