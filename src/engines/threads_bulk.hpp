// --engine threads: a bulk sender and receiver that each run a loop of blocking system calls on
// a worker thread of their own (one worker per connection), as a thread-per-connection server
// does. Same semantics as TcpSender and TcpReceiver: a sender sends its quota or until the
// deadline, then half-closes; a receiver reads to EOF; one counters.record() per call.
#pragma once

#include <asio/ip/tcp.hpp>

#include "engines/stream_parts.hpp"
#include "engines/stream_task.hpp"

namespace testio::engines {

class BlockingSender final : public StreamTask {
 public:
  // `signals` are the worker's, which the loop checks between calls.
  BlockingSender(asio::ip::tcp::socket socket, SenderParts parts, const BlockingSignals& signals);

  // Runs the whole send loop, then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  // Bytes the kernel took, or -1 with errno set.
  ssize_t send_next(int fd, std::size_t size) noexcept;
  // False when the loop should stop: the window ended or the worker is aborting.
  bool wait_for_pace(const TestClock& clock) const;

  asio::ip::tcp::socket socket_;
  SenderParts parts_;
  const BlockingSignals& signals_;
};

class BlockingReceiver final : public StreamTask {
 public:
  BlockingReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, const BlockingSignals& signals);

  // Reads to EOF (or until the worker aborts), then returns.
  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  const BlockingSignals& signals_;
};

}  // namespace testio::engines
