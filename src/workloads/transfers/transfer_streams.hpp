// Connection per transfer (--transfers): downloads of `size` bytes, each on a fresh connection
// (or, with --reuse, on the connection the slot already has). The client runs one TransferClient
// per slot, the K transfers in flight at a time; the server runs one TransferSource per slot and
// hands it each connection that names the slot. Owner: the worker thread each task is added to;
// the only state shared across slots is TransferPlan::next, an atomic counter.
#pragma once

#include <array>
#include <atomic>
#include <optional>
#include <string>

#include <asio/ip/tcp.hpp>

#include "stats/counters.hpp"
#include "util/page_buffer.hpp"
#include "stats/histogram.hpp"
#include "engines/stream_task.hpp"

namespace testio::workloads {

// What every client slot shares: where to connect, how much, and which transfer is next.
struct TransferPlan {
  asio::ip::tcp::endpoint server;
  std::optional<asio::ip::address> source;  // -B: the address to connect from
  std::string device;                       // -B %DEV
  std::uint64_t count = 0;
  std::uint64_t size = 0;
  std::size_t read_size = 0;                // bytes per read call (-l)
  std::uint64_t window = 0;                 // -w; 0 = autotuning
  bool reuse = false;
  std::string save_dir;                     // --save; empty: the bytes are discarded
  bool force = false;                       // --force: overwrite files under --save
  std::atomic<std::uint64_t> next{0};       // the next transfer number to take

  std::string file_for(std::uint64_t index) const;
};

// DIR/transfer-0001 ... for transfer `index` (from 0) of `count`: zero-padded to the width of the
// count, so names sort in order.
std::string transfer_file_name(const std::string& dir, std::uint64_t count, std::uint64_t index);

// One slot's results. Written by its worker; read by the lifecycle after the workers stopped.
struct TransferTally {
  // The kernel's measure of the handshake (TCP_INFO's RTT once established, from the SYN and its
  // answer): what the network took, whatever the worker was busy with meanwhile.
  stats::LatencyHistogram connect_ns;
  // connect() start to the worker running its completion: the handshake plus the worker's queue.
  stats::LatencyHistogram connect_seen_ns;
  stats::LatencyHistogram transfer_ns;  // connect() (or the request on a reused connection) to the last byte
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  std::uint64_t partial_files_removed = 0;
  std::string first_error;              // "transfer 17: ..." for the report
};

using Preamble = std::array<unsigned char, 24>;

class TransferClient final : public engines::StreamTask {
 public:
  // `preamble` announces the test and this slot on every connection it opens. `scratch`: the
  // worker's buffer, read into when nothing is saved (null, or --save: a buffer of its own).
  TransferClient(asio::io_context& context, stats::StreamCounters& counters, TransferPlan& plan,
                 const Preamble& preamble, TransferTally& tally, engines::StreamDone on_done, char* scratch);
  ~TransferClient() override;

  void begin(const engines::TestClock& clock) override;
  // SIGINT: take no further transfer; the one under way is abandoned (and its file removed).
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void take_next();
  void connect();
  void request_next();
  bool open_file();
  void read_next();
  void on_read(const asio::error_code& error, std::size_t received);
  void transfer_done();
  void fail(const std::string& reason);
  void remove_partial_file() noexcept;
  void finish_slot(bool failed);

  asio::ip::tcp::socket socket_;
  stats::StreamCounters& counters_;
  TransferPlan& plan_;
  Preamble preamble_;
  TransferTally& tally_;
  util::PageBuffer own_buffer_;  // with --save: the bytes stay until written to the file
  char* buffer_;                 // the worker's, or own_buffer_
  std::uint64_t current_ = 0;       // transfer number under way
  std::uint64_t received_ = 0;      // of the current transfer
  engines::Clock::time_point started_;
  int file_ = -1;
  std::string file_path_;
  char request_byte_ = 'n';
  bool window_closed_ = false;
  bool finished_ = false;
  engines::TestClock clock_;
  engines::StreamDone on_done_;
};

class TransferSource final : public engines::StreamTask {
 public:
  // Each transfer is bytes [0, size) of a payload that repeats every `payload_size` bytes (the
  // served file, or a generated block), written `chunk` bytes per call at most.
  TransferSource(stats::StreamCounters& counters, const char* payload, std::size_t payload_size,
                 std::size_t chunk, std::uint64_t size, bool reuse, engines::StreamDone on_done);

  void begin(const engines::TestClock& clock) override;
  // A connection that names this slot; on the worker thread. A second one while the first is
  // still being served is refused (closed): a client keeps one transfer per slot in flight.
  void serve(asio::ip::tcp::socket socket);
  // The client is done: the counters are final, and the slot reports itself finished.
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void write_next();
  void await_request();
  void drop_connection() noexcept;

  std::optional<asio::ip::tcp::socket> socket_;
  stats::StreamCounters& counters_;
  const char* payload_;
  std::size_t payload_size_;
  std::size_t chunk_;
  std::uint64_t size_;
  bool reuse_;
  std::uint64_t sent_ = 0;          // of the current transfer
  char request_ = 0;
  bool failed_ = false;
  bool finished_ = false;
  engines::TestClock clock_;
  engines::StreamDone on_done_;
};

}  // namespace testio::workloads
