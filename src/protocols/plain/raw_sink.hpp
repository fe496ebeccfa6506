// Plain TCP in, bytes and a digest out: what `nc HOST PORT < file` sends to `testio -s --raw`.
// Owner: the worker thread it is started on; it keeps itself alive (shared_from_this) until EOF.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <asio/ip/tcp.hpp>

#include "report/raw_report.hpp"
#include "util/digest.hpp"
#include "engines/stream_task.hpp"

namespace testio::plain {

class RawSink : public std::enable_shared_from_this<RawSink> {
 public:
  // Called once on the worker thread when the peer has closed (or the connection failed).
  using Done = std::function<void(report::RawTransfer)>;

  // Counts of what has been read so far, published for another thread (the sink's peer group).
  using Progress = std::shared_ptr<std::atomic<std::uint64_t>>;

  // `buffer` is the worker's (Worker::scratch): a read is hashed before the worker's next one.
  RawSink(asio::ip::tcp::socket socket, std::string peer, char* buffer, std::size_t buffer_size, util::HashKind hash,
          Progress progress, Done done);
  // Starts reading; call on the worker thread that owns the socket's io_context.
  void start();

 private:
  void wait_readable();
  void read_ready();
  void finish(std::string error);  // empty: the peer closed after its last byte

  asio::ip::tcp::socket socket_;
  char* buffer_;
  std::size_t buffer_size_;
  util::Digest digest_;   // one per connection, updated in this worker: hashing never serialises streams
  report::RawTransfer transfer_;
  Progress progress_;  // transfer_.bytes, published; written by this sink only
  engines::Clock::time_point accepted_ = engines::Clock::now();
  Done done_;
};

}  // namespace testio::plain
