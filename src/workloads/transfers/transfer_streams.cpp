// --transfers' data path: the plan the client's slots share, their streams, and the two sides
// that make them.
//
// Connection per transfer (--transfers): downloads of `size` bytes, each on a fresh connection
// (or, with --reuse, on the connection the slot already has). The client runs one TransferClient
// per slot, the K transfers in flight at a time; the server runs one TransferSource per slot and
// hands it each connection that names the slot. Owner: the worker thread each task is added to;
// the only state shared across slots is TransferPlan::next, an atomic counter.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include <asio/connect.hpp>
#include <asio/error.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>

#include "engines/worker.hpp"
#include "engines/stream_task.hpp"
#include "net/socket_options.hpp"
#include "net/tcp_info.hpp"
#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "util/log.hpp"
#include "util/page_buffer.hpp"
#include "util/pattern.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::transfers {
namespace {

using asio::ip::tcp;

std::uint64_t elapsed_ns(engines::Clock::time_point since) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(engines::Clock::now() - since).count());
}

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

std::string transfer_file_name(const std::string& dir, std::uint64_t count, std::uint64_t index) {
  const int width = static_cast<int>(std::to_string(count).size());
  char name[48];
  std::snprintf(name, sizeof name, "/transfer-%0*llu", width, static_cast<unsigned long long>(index + 1));
  return dir + name;
}

std::string TransferPlan::file_for(std::uint64_t index) const { return transfer_file_name(save_dir, count, index); }

TransferClient::TransferClient(asio::io_context& context, stats::StreamCounters& counters, TransferPlan& plan,
                               const Preamble& preamble, TransferTally& tally, engines::StreamDone on_done,
                               char* scratch)
    : socket_(context),
      counters_(counters),
      plan_(plan),
      preamble_(preamble),
      tally_(tally),
      own_buffer_(scratch && plan.save_dir.empty() ? 0 : plan.read_size),
      buffer_(own_buffer_ ? own_buffer_.data() : scratch),
      on_done_(std::move(on_done)) {}

TransferClient::~TransferClient() { remove_partial_file(); }

void TransferClient::begin(const engines::TestClock& clock) {
  clock_ = clock;
  take_next();
}

void TransferClient::take_next() {
  if (finished_) return;
  if (window_closed_) {
    finish_slot(false);
    return;
  }
  current_ = plan_.next.fetch_add(1, std::memory_order_relaxed);
  if (current_ >= plan_.count) {
    finish_slot(false);
    return;
  }
  received_ = 0;
  started_ = engines::Clock::now();
  if (plan_.reuse && socket_.is_open())
    request_next();
  else
    connect();
}

void TransferClient::connect() {
  asio::error_code error;
  socket_.open(plan_.server.protocol(), error);
  if (!error && plan_.source) socket_.bind(asio::ip::tcp::endpoint(*plan_.source, 0), error);
  if (error) {
    fail("cannot open a connection: " + error.message());
    return;
  }
  try {
    if (!plan_.device.empty()) net::bind_to_device(socket_.native_handle(), plan_.device);
    // Before connect: the SYN carries the window scale the buffer size needs.
    if (plan_.window) net::set_socket_buffers(socket_.native_handle(), plan_.window);
  } catch (const std::exception& refused) {
    fail(refused.what());
    return;
  }
  socket_.async_connect(plan_.server, [this](const asio::error_code& connect_error) {
    if (finished_) return;
    if (connect_error) {
      fail("connecting failed: " + connect_error.message());
      return;
    }
    tally_.connect_seen_ns.record(elapsed_ns(started_));
    const net::TcpInfo handshake = net::read_tcp_info(socket_.native_handle());
    if (handshake.valid) tally_.connect_ns.record(std::uint64_t{handshake.rtt_us} * 1000);
    asio::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);  // the request byte must not wait (--reuse)
    asio::async_write(socket_, asio::buffer(preamble_), [this](const asio::error_code& write_error, std::size_t) {
      if (finished_) return;
      if (write_error) {
        fail("sending the preamble failed: " + write_error.message());
        return;
      }
      if (open_file()) read_next();
    });
  });
}

void TransferClient::request_next() {
  // On a kept connection the client asks for the next transfer with one byte.
  asio::async_write(socket_, asio::buffer(&request_byte_, 1), [this](const asio::error_code& error, std::size_t) {
    if (finished_) return;
    if (error) {
      fail("asking for the next transfer failed: " + error.message());
      return;
    }
    if (open_file()) read_next();
  });
}

bool TransferClient::open_file() {
  if (plan_.save_dir.empty()) return true;
  file_path_ = plan_.file_for(current_);
  const int exclusive = plan_.force ? O_TRUNC : O_EXCL;
  file_ = ::open(file_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | exclusive, 0644);
  if (file_ < 0) {
    int open_errno = errno;
    fail(open_errno == EEXIST ? file_path_ + " exists; --force overwrites it"
                              : "cannot create " + file_path_ + ": " + std::strerror(open_errno));
    return false;
  }
  return true;
}

void TransferClient::read_next() {
  // Never read past this transfer on a kept connection; on a fresh one, after `size` bytes the
  // next read must see the server's EOF.
  std::size_t want = plan_.read_size;
  if (plan_.reuse) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, plan_.size - received_));
  socket_.async_read_some(asio::buffer(buffer_, want),
                          [this](const asio::error_code& error, std::size_t received) { on_read(error, received); });
}

void TransferClient::on_read(const asio::error_code& error, std::size_t received) {
  if (finished_) return;
  if (error == asio::error::eof && !plan_.reuse && received_ == plan_.size) {
    transfer_done();
    return;
  }
  if (error) {
    fail(error == asio::error::eof ? "the server closed after " + std::to_string(received_) + " of " +
                                         std::to_string(plan_.size) + " bytes"
                                   : error.message());
    return;
  }
  if (received_ + received > plan_.size) {
    fail("the server sent more than " + std::to_string(plan_.size) + " bytes");
    return;
  }
  counters_.record(received, clock_.since_start(engines::Clock::now()));
  received_ += received;
  for (std::size_t written = 0; file_ >= 0 && written < received;) {
    ssize_t n = ::write(file_, buffer_ + written, received - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail("writing " + file_path_ + " failed: " + std::strerror(errno));
      return;
    }
    written += static_cast<std::size_t>(n);
  }
  if (plan_.reuse && received_ == plan_.size)
    transfer_done();
  else
    read_next();
}

void TransferClient::transfer_done() {
  if (file_ >= 0) {
    int result = ::close(file_);
    file_ = -1;
    if (result != 0) {  // NFS and friends report write errors at close
      fail("writing " + file_path_ + " failed: " + std::strerror(errno));
      return;
    }
  }
  tally_.transfer_ns.record(elapsed_ns(started_));
  ++tally_.completed;
  if (!plan_.reuse) {
    asio::error_code ignored;
    socket_.close(ignored);
  }
  take_next();
}

void TransferClient::fail(const std::string& reason) {
  if (window_closed_) {  // abandoned on request, not a failure
    remove_partial_file();
    finish_slot(false);
    return;
  }
  ++tally_.failed;
  if (tally_.first_error.empty()) tally_.first_error = "transfer " + std::to_string(current_ + 1) + ": " + reason;
  finish_slot(true);
}

void TransferClient::remove_partial_file() noexcept {
  if (file_ < 0) return;
  ::close(file_);
  file_ = -1;
  ::unlink(file_path_.c_str());
  ++tally_.partial_files_removed;
}

void TransferClient::finish_slot(bool failed) {
  if (finished_) return;
  finished_ = true;
  remove_partial_file();
  if (plan_.reuse && socket_.is_open() && !failed && !window_closed_) {
    // Half-close and wait for the server's close: then it has counted everything it sent.
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    socket_.async_read_some(asio::buffer(buffer_, 1), [this](const asio::error_code& error, std::size_t) {
      asio::error_code ignored_close;
      socket_.close(ignored_close);
      engines::report_finished(counters_, error != asio::error::eof, on_done_);
    });
    return;
  }
  asio::error_code ignored;
  socket_.close(ignored);
  engines::report_finished(counters_, failed, on_done_);
}

void TransferClient::end_window() noexcept {
  if (finished_) return;
  window_closed_ = true;
  asio::error_code ignored;
  socket_.cancel(ignored);  // the transfer under way ends with operation_aborted
}

void TransferClient::close() noexcept {
  finished_ = true;
  remove_partial_file();
  asio::error_code ignored;
  socket_.close(ignored);
}

TransferSource::TransferSource(stats::StreamCounters& counters, const char* payload, std::size_t payload_size,
                               std::size_t chunk, std::uint64_t size, bool reuse, engines::StreamDone on_done)
    : counters_(counters),
      payload_(payload),
      payload_size_(payload_size),
      chunk_(chunk),
      size_(size),
      reuse_(reuse),
      on_done_(std::move(on_done)) {}

void TransferSource::begin(const engines::TestClock& clock) { clock_ = clock; }

void TransferSource::serve(asio::ip::tcp::socket socket) {
  if (finished_ || socket_) {
    asio::error_code ignored;
    socket.close(ignored);
    return;
  }
  socket_.emplace(std::move(socket));
  asio::error_code ignored;
  socket_->set_option(asio::ip::tcp::no_delay(true), ignored);  // the tail of a transfer must not wait for an ACK
  sent_ = 0;
  write_next();
}

void TransferSource::write_next() {
  const std::size_t offset = static_cast<std::size_t>(sent_ % payload_size_);
  const std::size_t size = static_cast<std::size_t>(
      std::min<std::uint64_t>({chunk_, payload_size_ - offset, size_ - sent_}));
  socket_->async_write_some(asio::buffer(payload_ + offset, size), [this](const asio::error_code& error,
                                                                          std::size_t written) {
    if (finished_) return;
    if (error) {
      failed_ = true;
      drop_connection();
      return;
    }
    counters_.record(written, clock_.since_start(engines::Clock::now()));
    sent_ += written;
    if (sent_ < size_)
      write_next();
    else if (reuse_)
      await_request();
    else
      drop_connection();  // the close is the transfer's end: its FIN follows the last byte
  });
}

void TransferSource::await_request() {
  socket_->async_read_some(asio::buffer(&request_, 1), [this](const asio::error_code& error, std::size_t) {
    if (finished_) return;
    if (error) {  // EOF: the client is done with this connection
      if (error != asio::error::eof) failed_ = true;
      drop_connection();
      return;
    }
    sent_ = 0;
    write_next();
  });
}

void TransferSource::drop_connection() noexcept {
  asio::error_code ignored;
  if (socket_) socket_->close(ignored);
  socket_.reset();
}

void TransferSource::end_window() noexcept {
  if (finished_) return;
  finished_ = true;
  drop_connection();
  engines::report_finished(counters_, failed_, on_done_);
}

void TransferSource::close() noexcept {
  finished_ = true;
  drop_connection();
}

// The client's side beyond its streams: the plan every slot shares, the check of the --save
// directory before anything connects, and the summary of the slots' tallies.

// The plan, once the server's address is known (with the first slot).
std::unique_ptr<TransferPlan> make_transfer_plan(const config::Config& config, const spec::TestSpec& spec,
                                                const asio::ip::tcp::endpoint& server) {
  auto plan = std::make_unique<TransferPlan>();
  plan->server = server;
  if (!config.bind_address.empty()) plan->source = asio::ip::make_address(config.bind_address);
  plan->device = config.bind_device;
  const TransfersSpec transfers = part_of<TransfersSpec>(spec);
  plan->count = transfers.count;
  plan->size = transfers.size;
  plan->read_size = static_cast<std::size_t>(spec.buffer);
  plan->window = spec.window;
  plan->reuse = transfers.reuse;
  plan->save_dir = config.save_dir;
  plan->force = config.force;
  return plan;
}

// Throws std::runtime_error (one sentence) when DIR is not a writable directory or, without
// --force, already holds a file this test would write.
void check_save_directory(const config::Config& config, std::uint64_t transfers) {
  namespace fs = std::filesystem;
  const std::string& dir = config.save_dir;
  check_writable_directory(dir);
  std::error_code error;
  if (config.force) return;
  // Walk the directory rather than probing each of COUNT names: COUNT may be millions.
  const std::string first = transfer_file_name(dir, transfers, 0);
  const std::size_t name_length = first.size() - dir.size() - 1;
  std::uint64_t clashes = 0;
  std::string example;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != name_length || name.rfind("transfer-", 0) != 0) continue;
    const std::string digits = name.substr(9);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::uint64_t number = std::stoull(digits);
    if (number < 1 || number > transfers) continue;
    if (clashes++ == 0) example = entry.path().string();
  }
  if (clashes)
    throw std::runtime_error(example + (clashes > 1 ? " and " + std::to_string(clashes - 1) + " more files" : "") +
                             " would be overwritten; --force allows it");
}

// The slots' tallies merged, once the workers have stopped.
TransfersSummary summarize_transfers(const TransferPlan& plan, const TransferTally* tallies, std::uint32_t slots,
                                     double seconds) {
  TransfersSummary summary;
  summary.requested = plan.count;
  summary.size = plan.size;
  summary.concurrency = slots;
  summary.reuse = plan.reuse;
  summary.saved_to = plan.save_dir;
  summary.seconds = seconds;
  stats::LatencyHistogram connect, connect_seen, transfer;
  for (std::uint32_t i = 0; i < slots; ++i) {
    connect.merge(tallies[i].connect_ns);
    connect_seen.merge(tallies[i].connect_seen_ns);
    transfer.merge(tallies[i].transfer_ns);
    summary.completed += tallies[i].completed;
    summary.failed += tallies[i].failed;
    summary.partial_files_removed += tallies[i].partial_files_removed;
    if (summary.first_error.empty()) summary.first_error = tallies[i].first_error;
  }
  summary.connect = stats::summarize(connect);
  summary.connect_seen = stats::summarize(connect_seen);
  summary.transfer = stats::summarize(transfer);
  if (seconds > 0) {
    summary.transfers_per_second = static_cast<double>(summary.completed) / seconds;
    summary.bits_per_second = util::bits_per_second(summary.completed * plan.size, seconds);
  }
  return summary;
}

// The server sends on every connection; the slots are the "forward" connections of the wire.
DirectionLayout slots_of(const spec::TestSpec& spec) { return {spec.connections, 0, /*client_sends_forward=*/false}; }

// One TransferClient per slot, taking transfer numbers from the plan they share. Owner: the
// lifecycle (control thread); each tally is written by its slot's worker and read once they stopped.
class DownloadSide final : public TestSide {
 public:
  DownloadSide(const config::Config& config, const spec::TestSpec& spec)
      : config_(config), spec_(spec), tallies_(std::make_unique<TransferTally[]>(spec.connections)) {
    if (!config.save_dir.empty()) check_save_directory(config, part_of<TransfersSpec>(spec).count);
  }

  DirectionLayout layout() const override { return slots_of(spec_); }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }
  void describe_start(report::StartInfo& start) const override { start.extent = transfers_extent(spec_); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    if (!plan_) plan_ = make_transfer_plan(config_, spec_, *place.server);
    return std::make_unique<TransferClient>(place.worker.context(), place.counters, *plan_, place.preamble,
                                            tallies_[place.index], std::move(place.done),
                                            place.worker.scratch(plan_->read_size));
  }

  void add_to_report(report::TestReport& report) const override {
    if (!plan_) return;
    TransfersSummary summary = summarize_transfers(*plan_, tallies_.get(), spec_.connections, report.local().wall_s);
    if (summary.partial_files_removed)
      util::log_warn("removed {} partially written files under {}", summary.partial_files_removed, config_.save_dir);
    report.sections.push_back(std::make_shared<TransfersSection>(std::move(summary)));
  }

  std::string failure(const report::TestReport& report) const override {
    const auto* section = report.section<TransfersSection>();
    if (!section) return {};
    const TransfersSummary& done = section->summary();
    if (done.completed == done.requested) return {};
    return std::to_string(done.completed) + " of " + std::to_string(done.requested) + " transfers completed; " +
           (done.first_error.empty() ? "the rest did not start" : done.first_error);
  }

 private:
  const config::Config& config_;
  spec::TestSpec spec_;
  std::unique_ptr<TransferPlan> plan_;  // made with the first slot, once the server's address is known
  std::unique_ptr<TransferTally[]> tallies_;
};

// One TransferSource per slot; each connection that names a slot goes to its source. Owner: the
// lifecycle (control thread); the sources belong to their workers.
class ServeSide final : public TestSide {
 public:
  ServeSide(const spec::TestSpec& spec, const util::MappedFile* served)
      : spec_(spec), transfers_(part_of<TransfersSpec>(spec)) {
    if (served && transfers_.size > served->size())
      throw std::runtime_error("this server serves " + served->path() + " (" + std::to_string(served->size()) +
                               " bytes): a transfer of " + std::to_string(transfers_.size) + " bytes is larger");
    // Each transfer is a prefix of the served file, or a generated block repeated.
    if (served) {
      payload_ = served->data();
      payload_size_ = served->size();
    } else {
      generated_ = util::make_pattern(spec.buffer);
      payload_ = generated_.data();
      payload_size_ = spec.buffer;
    }
  }

  DirectionLayout layout() const override { return slots_of(spec_); }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }
  void describe_start(report::StartInfo& start) const override { start.extent = transfers_extent(spec_); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    auto source = std::make_unique<TransferSource>(place.counters, payload_, payload_size_, spec_.buffer,
                                                   transfers_.size, transfers_.reuse, std::move(place.done));
    if (sources_.size() <= place.index) sources_.resize(place.index + 1, nullptr);
    sources_[place.index] = source.get();
    return source;
  }

  std::string route(std::uint32_t slot, tcp::socket socket, engines::Worker& worker) override {
    if (slot >= sources_.size() || !sources_[slot])
      return "slot " + std::to_string(slot) + " is beyond the test's " + std::to_string(spec_.connections) +
             " connections";
    auto owned = std::make_shared<tcp::socket>(std::move(socket));
    worker.post([source = sources_[slot], owned] { source->serve(std::move(*owned)); });
    return {};
  }

 private:
  spec::TestSpec spec_;
  TransfersSpec transfers_;
  util::PageBuffer generated_;
  const char* payload_ = nullptr;
  std::size_t payload_size_ = 0;
  std::vector<TransferSource*> sources_;  // by slot; owned by their workers
};

}  // namespace

std::unique_ptr<TestSide> download_side(const config::Config& config, const spec::TestSpec& spec) {
  return std::make_unique<DownloadSide>(config, spec);
}

std::unique_ptr<TestSide> serve_side(const spec::TestSpec& spec, const util::MappedFile* served) {
  return std::make_unique<ServeSide>(spec, served);
}

}  // namespace testio::workloads::transfers
