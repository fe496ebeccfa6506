// What a bulk sender or receiver of the threads and uring engines holds besides its socket and its
// engine's own state: its counters, its bytes or buffer, its digest and whom to tell when it ends;
// and the steps every engine takes with them after each call, so the engines count alike.
#pragma once

#include <memory>
#include <optional>

#include "config/config.hpp"
#include "stats/counters.hpp"
#include "workloads/send_cursor.hpp"
#include "workloads/tcp_stream.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads {

struct SenderParts {
  stats::StreamCounters* counters;
  const char* payload;
  SendCursor cursor;
  StreamDone on_done;
  std::optional<StreamDigest> digest;
  SendPacing pacing;
  SendSource source;

  const char* next_data() const noexcept { return payload + cursor.offset(); }
  // The kernel took `written` bytes from next_data(): count them, hash them, move on.
  void took(std::size_t written, stats::TestNanos since_start);
  // Half-closes `fd` (the receiver reads to EOF, so both ends count the same bytes), leaves the
  // digest and reports the stream finished.
  void finish(int fd, bool failed);
};

class ReceiverParts {
 public:
  ReceiverParts(stats::StreamCounters& counters, config::RecvMode mode, std::size_t buffer_size, StreamDone on_done,
                std::optional<StreamDigest> digest);

  // Where the next call reads to: recv allocates a fresh buffer per call (the point of that
  // mode); the others reuse one for the connection's life.
  char* next_buffer();
  std::size_t buffer_size() const noexcept { return buffer_size_; }
  // MSG_TRUNC for trunc: tcp_recvmsg() then drops the bytes without copying them out.
  int flags() const noexcept;
  // A call read `received` bytes (0: EOF) into next_buffer()'s buffer; a recv buffer is freed.
  void took(std::size_t received, stats::TestNanos since_start);
  // Leaves the digest and reports the stream finished. The socket stays open until the stream
  // is destroyed: the sampler may still read TCP_INFO by its descriptor.
  void finish(bool failed);

 private:
  stats::StreamCounters& counters_;
  config::RecvMode mode_;
  std::size_t buffer_size_;
  std::unique_ptr<char[]> buffer_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
};

}  // namespace testio::workloads
