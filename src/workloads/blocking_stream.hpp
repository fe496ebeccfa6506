// --engine threads: a bulk sender and receiver that each run a loop of blocking system calls on
// a worker thread of their own (one worker per connection), as a thread-per-connection server
// does. Same semantics as TcpSender and TcpReceiver: a sender sends its quota or until the
// deadline, then half-closes; a receiver reads to EOF; one counters.record() per call.
#pragma once

#include <memory>
#include <optional>

#include <asio/ip/tcp.hpp>

#include "stats/counters.hpp"
#include "workloads/send_cursor.hpp"
#include "workloads/tcp_stream.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads {

class BlockingSender final : public StreamTask {
 public:
  // As TcpSender; `signals` are the worker's, which the loop checks between calls.
  BlockingSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
                 std::size_t payload_size, std::size_t chunk, std::uint64_t quota, StreamDone on_done,
                 std::optional<StreamDigest> digest, SendPacing pacing, SendSource source,
                 const BlockingSignals& signals);

  // Runs the whole send loop, then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  // Bytes the kernel took, or -1 with errno set.
  ssize_t send_next(int fd, std::size_t size) noexcept;
  // False when the loop should stop: the window ended or the worker is aborting.
  bool wait_for_pace(const TestClock& clock) const;
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  const char* payload_;
  SendCursor cursor_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
  SendPacing pacing_;
  SendSource source_;
  const BlockingSignals& signals_;
};

class BlockingReceiver final : public StreamTask {
 public:
  BlockingReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters, config::RecvMode mode,
                   std::size_t buffer_size, StreamDone on_done, std::optional<StreamDigest> digest,
                   const BlockingSignals& signals);

  // Reads to EOF (or until the worker aborts), then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  config::RecvMode mode_;
  std::size_t buffer_size_;
  // recv_into and trunc: one buffer for the connection's life; recv: a fresh one per call.
  std::unique_ptr<char[]> buffer_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
  const BlockingSignals& signals_;
};

}  // namespace testio::workloads
