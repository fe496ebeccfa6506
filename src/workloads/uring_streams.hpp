// --engine uring: a bulk sender and receiver whose system calls are io_uring operations on their
// worker's UringLoop. Same semantics as TcpSender and TcpReceiver: a sender sends its quota or
// until the deadline (its queued send is cancelled there, which hands the kernel nothing), then
// half-closes; a receiver reads to EOF; one counters.record() per completed operation.
#pragma once

#include <memory>
#include <optional>

#include <asio/ip/tcp.hpp>

#include "stats/counters.hpp"
#include "workloads/send_cursor.hpp"
#include "workloads/tcp_stream.hpp"
#include "workloads/uring_loop.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads {

class UringSender final : public StreamTask, public UringStream {
 public:
  // As TcpSender; `source.mode` is send or zerocopy (sendfile is refused with this engine).
  // Registers with `loop`, which starts it.
  UringSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters, const char* payload,
              std::size_t payload_size, std::size_t chunk, std::uint64_t quota, StreamDone on_done,
              std::optional<StreamDigest> digest, SendPacing pacing, SendSource source, UringLoop& loop);

  void begin(const TestClock&) override {}  // the loop starts it, after every stream's begin()
  void close() noexcept override;

  void start(const TestClock& clock) override;
  void complete(const io_uring_cqe& completion) override;
  void window_ended() override;
  void abort() override;
  void resume() override {
    if (!finished_) send_next();  // it may have ended while paused
  }

 private:
  void send_next();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  const char* payload_;
  SendCursor cursor_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
  SendPacing pacing_;
  SendSource source_;
  UringLoop& loop_;
  TestClock clock_;
  bool sending_ = false;  // a send is queued (otherwise, before the end, it is paused for its pace)
  bool window_over_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

class UringReceiver final : public StreamTask, public UringStream {
 public:
  UringReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters, config::RecvMode mode,
                std::size_t buffer_size, StreamDone on_done, std::optional<StreamDigest> digest, UringLoop& loop);

  void begin(const TestClock&) override {}
  void close() noexcept override;

  void start(const TestClock& clock) override;
  void complete(const io_uring_cqe& completion) override;
  void abort() override;

 private:
  void receive_next();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  config::RecvMode mode_;
  std::size_t buffer_size_;
  // recv_into and trunc: one buffer for the connection's life; recv: a fresh one per operation.
  std::unique_ptr<char[]> buffer_;
  StreamDone on_done_;
  std::optional<StreamDigest> digest_;
  UringLoop& loop_;
  TestClock clock_;
  bool receiving_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

}  // namespace testio::workloads
