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
  std::size_t queued_size_ = 0;   // what the queued send asked for
  bool socket_was_full_ = false;  // the last send was short
  bool sending_ = false;  // a send is queued (otherwise, before the end, it is paused for its pace)
  bool window_over_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

// recv_into into the worker's buffer (which nothing reads) keeps one multishot receive queued for
// the whole test, into the worker's provided-buffer ring (UringLoop::multishot_receives says when
// the kernel can); every other receive mode, and an older kernel, queues one receive per completion.
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
  void receive_many();
  void complete_many(const io_uring_cqe& completion);
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  UringLoop& loop_;
  TestClock clock_;
  ProvidedBuffers* buffers_ = nullptr;  // the loop's, while receiving multishot
  bool received_multishot_ = false;      // the queued multishot receive has brought bytes
  bool receiving_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

}  // namespace testio::engines
