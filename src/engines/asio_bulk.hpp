// Bulk TCP throughput: a sender that writes for the window (or its share of -n bytes) and then
// half-closes, and a receiver that reads to EOF. Owner: the worker thread the stream is added to.
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "spec/test_spec.hpp"
#include "stats/counters.hpp"
#include "engines/stream_parts.hpp"
#include "engines/stream_task.hpp"
#include "engines/zero_copy_receive.hpp"

namespace testio::engines {

class TcpSender final : public StreamTask {
 public:
  // `parts` names the payload (shared read-only by the worker's senders; it outlives them), the
  // cursor over it, the counters, digest, pacing and source, as for every engine's sender.
  TcpSender(asio::ip::tcp::socket socket, SenderParts parts);

  void begin(const TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void write_next();
  void send_file(std::size_t size);
  void on_written(const asio::error_code& error, std::size_t written);
  void finish(bool failed);
  void await_peer_close();
  void read_until_peer_closes();

  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_timer_;
  asio::steady_timer pacing_timer_;  // also bounds the wait for the peer to close
  SenderParts parts_;
  bool window_closed_ = false;
  bool finished_ = false;  // sending is over (the peer's close may still be awaited)
  bool closed_ = false;
  std::unique_ptr<char[]> drain_;  // what the peer sends before it closes; only while awaiting it
  TestClock clock_;
};

class TcpReceiver final : public StreamTask {
 public:
  // recv, recv_into and trunc read after each readiness; splice and mmap drain the socket with
  // their zero-copy reader, or fall back to recv_into where the kernel cannot do them.
  TcpReceiver(asio::ip::tcp::socket socket, ReceiverParts parts);

  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  void read_next();
  void on_read(const asio::error_code& error, std::size_t received);
  void on_readable(const asio::error_code& error);
  void fall_back_to_copying();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  // splice and mmap: drains the socket after each readiness wait.
  std::unique_ptr<ZeroCopyReader> zero_copy_;
  bool finished_ = false;
  TestClock clock_;
};

}  // namespace testio::engines
