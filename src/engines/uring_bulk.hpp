// --engine uring: a bulk sender and receiver whose system calls are io_uring operations on their
// worker's UringLoop. Same semantics as TcpSender and TcpReceiver: a sender sends its quota or
// until the deadline (its queued send is cancelled there, which hands the kernel nothing), then
// half-closes; a receiver reads to EOF; one counters.record() per completed operation.
#pragma once

#include <asio/ip/tcp.hpp>

#include "engines/stream_parts.hpp"
#include "engines/uring_loop.hpp"
#include "engines/stream_task.hpp"

namespace testio::engines {

class UringSender final : public StreamTask, public UringStream {
 public:
  // `parts.source.mode` is send or zerocopy (sendfile is refused with this engine). Registers
  // with `loop`, which starts it.
  UringSender(asio::ip::tcp::socket socket, SenderParts parts, UringLoop& loop);

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
  SenderParts parts_;
  UringLoop& loop_;
  TestClock clock_;
  bool sending_ = false;  // a send is queued (otherwise, before the end, it is paused for its pace)
  bool window_over_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

class UringReceiver final : public StreamTask, public UringStream {
 public:
  UringReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, UringLoop& loop);

  void begin(const TestClock&) override {}
  void close() noexcept override;

  void start(const TestClock& clock) override;
  void complete(const io_uring_cqe& completion) override;
  void abort() override;

 private:
  void receive_next();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  UringLoop& loop_;
  TestClock clock_;
  bool receiving_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

}  // namespace testio::engines
