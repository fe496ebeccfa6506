// Plain TCP in, bytes and a digest out: what `nc HOST PORT < file` sends to `testio -s --raw`.
// Owner: the worker thread it is started on; it keeps itself alive (shared_from_this) until EOF.
#pragma once

#include <functional>
#include <memory>

#include <asio/ip/tcp.hpp>

#include "report/raw_report.hpp"
#include "util/digest.hpp"
#include "engines/stream_task.hpp"

namespace testio::workloads {

class RawSink : public std::enable_shared_from_this<RawSink> {
 public:
  // Called once on the worker thread when the peer has closed (or the connection failed).
  using Done = std::function<void(report::RawTransfer)>;

  RawSink(asio::ip::tcp::socket socket, std::string peer, std::size_t buffer_size, util::HashKind hash, Done done);
  // Starts reading; call on the worker thread that owns the socket's io_context.
  void start();

 private:
  void read_next();

  asio::ip::tcp::socket socket_;
  std::unique_ptr<char[]> buffer_;
  std::size_t buffer_size_;
  util::Digest digest_;   // one per connection, updated in this worker: hashing never serialises streams
  report::RawTransfer transfer_;
  engines::Clock::time_point accepted_ = engines::Clock::now();
  Done done_;
};

}  // namespace testio::workloads
