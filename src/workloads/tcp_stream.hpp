// Bulk TCP throughput: a sender that writes for the window (or its share of -n bytes) and then
// half-closes, and a receiver that reads to EOF. Owner: the worker thread the stream is added to.
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "stats/counters.hpp"
#include "util/digest.hpp"
#include "workloads/send_cursor.hpp"
#include "workloads/workload.hpp"
#include "workloads/zero_copy_receive.hpp"

namespace testio::workloads {

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
  config::SendMode mode = config::SendMode::send;
  int file_fd = -1;
  std::uint64_t file_offset = 0;
};

class TcpSender final : public StreamTask {
 public:
  // `payload` is shared read-only by the worker's senders and outlives them; quota 0 = no limit.
  // The stream sends bytes [0, quota) of a payload repeating every `payload_size` bytes, at most
  // `chunk` per call: a generated block (payload_size == chunk) or its part of a -F file.
  TcpSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
            std::size_t payload_size, std::size_t chunk, std::uint64_t quota, StreamDone on_done,
            std::optional<StreamDigest> digest = std::nullopt, SendPacing pacing = {}, SendSource source = {});

  void begin(const TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void write_next();
  void send_file(std::size_t size);
  void on_written(const asio::error_code& error, std::size_t written);
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_timer_;
  asio::steady_timer pacing_timer_;
  SendSource source_;
  SendPacing pacing_;
  stats::StreamCounters& counters_;
  const char* payload_;
  SendCursor cursor_;
  bool window_closed_ = false;
  bool finished_ = false;
  TestClock clock_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
};

class TcpReceiver final : public StreamTask {
 public:
  TcpReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters,
              config::RecvMode mode, std::size_t buffer_size, StreamDone on_done,
              std::optional<StreamDigest> digest = std::nullopt);

  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  void read_next();
  void on_read(const asio::error_code& error, std::size_t received);
  void on_readable(const asio::error_code& error);
  void fall_back_to_copying();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  config::RecvMode mode_;  // as used: splice and mmap fall back to recv_into where unsupported
  std::size_t buffer_size_;
  // recv_into and trunc: one buffer for the connection's life. recv: a fresh one per call, freed
  // when the call completes, which is the point of that mode.
  std::unique_ptr<char[]> buffer_;
  // splice and mmap: drains the socket after each readiness wait.
  std::unique_ptr<ZeroCopyReader> zero_copy_;
  // splice or mmap was asked for: a fallback to recv_into counts its bytes as copied, so the
  // report shows a zero-copy share of 0 rather than none.
  bool counts_copies_ = false;
  bool finished_ = false;
  TestClock clock_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
};

}  // namespace testio::workloads
