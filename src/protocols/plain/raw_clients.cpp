// `testio -s --raw`: a sink any nc/socat/script can send to, as a peer of the one server
// (server.cpp: the acceptor, --allow, signals and -1 are its). Each connection is read to EOF by a
// RawSink on a worker (hashing there, so senders hash in parallel) and reported in one line as it
// closes; the connections one address has open at once are also reported together (PeerGroups).
// The control thread admits and prints; the workers only read.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/error.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "config/config.hpp"
#include "engines/stream_task.hpp"
#include "engines/worker_pool.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/deadline.hpp"
#include "lifecycle/log_limiter.hpp"
#include "protocols/plain/raw.hpp"
#include "report/raw_report.hpp"
#include "util/digest.hpp"
#include "util/log.hpp"

namespace testio::plain {

// Plain TCP in, bytes and a digest out: what `nc HOST PORT < file` sends to `testio -s --raw`.
// Owner: the worker thread it is started on; it keeps itself alive (shared_from_this) until EOF.
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

// The raw sink's view of each peer address: the connections one address has open at once form a
// group (a multi-connection sender, as iperf2's server groups a -P client). Once a group has two
// or more, it is reported each interval and summed when its last connection has closed and no
// other has arrived for kLinger (a sender's later connections may be accepted only after its
// first ones finished); each connection still gets its own line from the sink. Owner: the server's control thread; the
// progress counters it reads are written by the workers' sinks.
class PeerGroups {
 public:
  // `interval_s` 0: no interval lines, only the sums.
  PeerGroups(asio::any_io_executor io, double interval_s, std::ostream& out, config::OutputFormat format, char unit);

  // Connection `id` from `address` was accepted; its sink publishes what it has read in `progress`.
  void joined(const std::string& address, std::uint64_t id, RawSink::Progress progress);
  // It has closed, with these figures.
  void left(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer);
  // The sink stops: the groups whose connections have all closed are summed now.
  void flush();

  static constexpr std::chrono::milliseconds kLinger{500};

 private:
  using Clock = std::chrono::steady_clock;
  struct Member {
    std::uint64_t id;
    RawSink::Progress progress;
  };
  struct Group {
    explicit Group(const asio::any_io_executor& io) : ticker(io), linger(io) {}
    Clock::time_point start = Clock::now();
    std::vector<Member> open;
    report::RawGroupSum sum;          // connections so far; bytes and calls of those closed
    std::uint32_t closed_since_tick = 0;
    std::uint64_t bytes_at_tick = 0;  // the group's bytes at the last interval's end
    double tick_s = 0;                // that end, since start
    std::uint64_t ticks = 0;
    double last_close_s = 0;
    asio::steady_timer ticker;
    asio::steady_timer linger;  // runs while no connection is open
  };

  void schedule_tick(Group& group);
  // Prints the interval from the last tick to `now_s` when the group has two connections or more.
  void close_interval(Group& group, double now_s);
  double since_start(const Group& group) const;
  // Prints the last interval and the sum, and forgets the group.
  void end(std::map<std::string, std::unique_ptr<Group>>::iterator found);

  asio::any_io_executor io_;
  double interval_s_;
  std::ostream& out_;
  config::OutputFormat format_;
  char unit_;
  std::map<std::string, std::unique_ptr<Group>> groups_;  // by address, while one is open
};

namespace {

using lifecycle::ForeignClients;
using lifecycle::LogLimiter;
using lifecycle::TestSlots;

using asio::ip::tcp;

// Owner: the server's control thread; the sinks belong to the pool's workers.
class RawClients final : public ForeignClients {
 public:
  RawClients(const config::Config& config, std::ostream& out, metrics::ServerMetrics& metrics)
      : config_(config), metrics_(metrics), pool_(spec::effective_threads(config.spec.threads, 1u << 16)), out_(out) {
    // Asked before the workers start (Worker::scratch): one read buffer per worker, whatever
    // the number of connections.
    for (unsigned i = 0; i < pool_.size(); ++i)
      buffers_.push_back(pool_.worker_for_stream(i).scratch(config.spec.buffer));
    pool_.start();
  }
  ~RawClients() override { pool_.stop(); }

  bool takes_every_connection() const noexcept override { return true; }
  metrics::Protocol protocol() const noexcept override { return metrics::Protocol::raw; }
  std::string listening(const std::string& endpoint) const override {
    return "raw sink listening on " + endpoint + " (" + std::string(util::to_string(config_.spec.hash)) + " digest)";
  }
  void stop() override {
    if (groups_) groups_->flush();
  }

  asio::awaitable<std::optional<bool>> serve(tcp::socket socket, std::array<unsigned char, 4>, TestSlots&,
                                             std::chrono::steady_clock::duration) override;
  std::pair<std::uint64_t, std::uint64_t> bytes_so_far() const noexcept override;

 private:
  // One connection's sink: what it has read so far, and how it ended (a timer its end cancels,
  // and whether it read to EOF), which its serve() waits for.
  struct Ending {
    explicit Ending(const asio::any_io_executor& executor) : timer(executor, asio::steady_timer::time_point::max()) {}
    asio::steady_timer timer;
    bool clean = false;
  };
  struct Open {
    RawSink::Progress progress;
    std::shared_ptr<Ending> ending;
  };

  bool admit(const std::string& peer, const asio::any_io_executor& executor);
  void start_sink(tcp::socket socket, const tcp::endpoint& peer, std::uint64_t id, Open& open);
  void finished(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer);

  const config::Config& config_;
  metrics::ServerMetrics& metrics_;  // --metrics: a sink's bytes count there once it has closed
  engines::WorkerPool pool_;
  std::vector<char*> buffers_;          // by worker
  std::optional<PeerGroups> groups_;    // made with the first connection, on its executor
  std::optional<LogLimiter> log_;       // likewise
  std::ostream& out_;
  std::map<std::uint64_t, Open> open_;  // by connection id, while its sink reads
  std::uint64_t accepted_ = 0;
};

asio::awaitable<std::optional<bool>> RawClients::serve(tcp::socket socket, std::array<unsigned char, 4>, TestSlots&,
                                                       std::chrono::steady_clock::duration) {
  asio::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec || !admit(lifecycle::endpoint_text(peer), socket.get_executor())) co_return std::nullopt;
  const std::uint64_t id = accepted_++;
  Open& open = open_[id];
  open.ending = std::make_shared<Ending>(socket.get_executor());
  const std::shared_ptr<Ending> ending = open.ending;
  start_sink(std::move(socket), peer, id, open);
  asio::error_code cancelled;
  co_await ending->timer.async_wait(asio::redirect_error(asio::use_awaitable, cancelled));
  co_return ending->clean;
}

// The connection cap; refusals are logged at most once a second per reason. (--allow is the
// server's, at its door.)
bool RawClients::admit(const std::string& peer, const asio::any_io_executor& executor) {
  if (!groups_) {
    groups_.emplace(executor, config_.spec.interval_s, out_, config_.output, config_.unit);
    log_.emplace(executor);
  }
  if (open_.size() < config_.limits.max_connections) return true;
  log_->warn("cap", "refused a connection from " + peer + ": " + std::to_string(open_.size()) +
                        " are open (--max-connections)");
  return false;
}

void RawClients::start_sink(tcp::socket socket, const tcp::endpoint& peer, std::uint64_t id, Open& open) {
  engines::Worker& worker = pool_.worker_for_stream(static_cast<std::uint32_t>(id));
  tcp::socket owned(worker.context(), peer.protocol(), socket.release());
  open.progress = std::make_shared<std::atomic<std::uint64_t>>(0);
  const std::string address = lifecycle::address_text(peer.address());
  groups_->joined(address, id, open.progress);
  auto done = [this, executor = open.ending->timer.get_executor(), address, id](report::RawTransfer transfer) {
    asio::post(executor, [this, address, id, transfer = std::move(transfer)] { finished(address, id, transfer); });
  };
  auto sink = std::make_shared<RawSink>(std::move(owned), lifecycle::endpoint_text(peer),
                                                   buffers_[worker.index()], config_.spec.buffer, config_.spec.hash,
                                                   open.progress, std::move(done));
  worker.post([sink] { sink->start(); });
}

void RawClients::finished(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer) {
  if (!transfer.error.empty()) util::log_warn("raw connection from {} ended early: {}", transfer.peer, transfer.error);
  report::print_raw_transfer(out_, transfer, config_.output, config_.unit);
  groups_->left(address, id, transfer);
  auto found = open_.find(id);
  if (found == open_.end()) return;
  // A raw connection has no report for the server's counters to read: its bytes count as it closes.
  metrics_.count_unreported(transfer.bytes, 0);
  found->second.ending->clean = transfer.error.empty();
  found->second.ending->timer.cancel();
  open_.erase(found);
}

std::pair<std::uint64_t, std::uint64_t> RawClients::bytes_so_far() const noexcept {
  std::uint64_t received = 0;
  for (const auto& [id, open] : open_) received += open.progress->load(std::memory_order_relaxed);
  return {received, 0};
}

}  // namespace

std::unique_ptr<lifecycle::ForeignClients> raw_clients(const config::Config& config, std::ostream& out,
                                            metrics::ServerMetrics& metrics) {
  return std::make_unique<RawClients>(config, out, metrics);
}

PeerGroups::PeerGroups(asio::any_io_executor io, double interval_s, std::ostream& out, config::OutputFormat format,
                       char unit)
    : io_(io), interval_s_(interval_s), out_(out), format_(format), unit_(unit) {}

double PeerGroups::since_start(const Group& group) const {
  return std::chrono::duration<double>(Clock::now() - group.start).count();
}

void PeerGroups::joined(const std::string& address, std::uint64_t id, RawSink::Progress progress) {
  std::unique_ptr<Group>& slot = groups_[address];
  if (!slot) {
    slot = std::make_unique<Group>(io_);
    slot->sum.peer = address;
    if (interval_s_ > 0) schedule_tick(*slot);
  }
  slot->linger.cancel();
  slot->open.push_back(Member{id, std::move(progress)});
  ++slot->sum.connections;
}

void PeerGroups::left(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer) {
  auto found = groups_.find(address);
  if (found == groups_.end()) return;
  Group& group = *found->second;
  std::erase_if(group.open, [id](const Member& member) { return member.id == id; });
  group.sum.bytes += transfer.bytes;
  group.sum.calls += transfer.calls;
  if (!transfer.error.empty()) ++group.sum.incomplete;
  ++group.closed_since_tick;
  if (!group.open.empty()) return;
  group.last_close_s = since_start(group);
  group.linger.expires_after(kLinger);
  group.linger.async_wait([this, address](const asio::error_code& error) {
    if (error) return;  // another connection joined, or the group is gone
    if (auto lingering = groups_.find(address); lingering != groups_.end()) end(lingering);
  });
}

void PeerGroups::flush() {
  for (auto group = groups_.begin(); group != groups_.end();) {
    auto next = std::next(group);
    if (group->second->open.empty()) end(group);
    group = next;
  }
}

// The group ends at its last close, with its last (partial) interval and its sum.
void PeerGroups::end(std::map<std::string, std::unique_ptr<Group>>::iterator found) {
  Group& group = *found->second;
  if (interval_s_ > 0 && group.closed_since_tick > 0 && group.last_close_s > group.tick_s)
    close_interval(group, group.last_close_s);
  group.sum.elapsed_s = group.last_close_s;
  if (group.sum.connections >= 2) report::print_raw_sum(out_, group.sum, format_, unit_);
  groups_.erase(found);  // cancels its timers, whose handlers then touch nothing
}

// Ticks at fixed times from the group's start, so late handlers do not drift the intervals.
void PeerGroups::schedule_tick(Group& group) {
  ++group.ticks;
  group.ticker.expires_at(group.start + engines::clock_seconds(interval_s_ * static_cast<double>(group.ticks)));
  group.ticker.async_wait([this, &group](const asio::error_code& error) {
    if (error) return;
    close_interval(group, interval_s_ * static_cast<double>(group.ticks));
    schedule_tick(group);
  });
}

void PeerGroups::close_interval(Group& group, double now_s) {
  std::uint64_t bytes = group.sum.bytes;  // those closed, plus what the open ones have read so far
  for (const Member& member : group.open) bytes += member.progress->load(std::memory_order_relaxed);
  report::RawGroupInterval interval;
  interval.peer = group.sum.peer;
  interval.start_s = group.tick_s;
  interval.end_s = now_s;
  interval.connections = static_cast<std::uint32_t>(group.open.size()) + group.closed_since_tick;
  interval.bytes = bytes - std::min(bytes, group.bytes_at_tick);
  group.bytes_at_tick = bytes;
  group.tick_s = now_s;
  group.closed_since_tick = 0;
  // A lingering group's ticks with nothing open and nothing closed are not worth a line.
  if (group.sum.connections >= 2 && interval.connections > 0) report::print_raw_interval(out_, interval, format_, unit_);
}

RawSink::RawSink(asio::ip::tcp::socket socket, std::string peer, char* buffer, std::size_t buffer_size,
                 util::HashKind hash, Progress progress, Done done)
    : socket_(std::move(socket)),
      buffer_(buffer),
      buffer_size_(buffer_size),
      digest_(hash),
      progress_(std::move(progress)),
      done_(std::move(done)) {
  transfer_.role = "received";
  transfer_.peer = std::move(peer);
  transfer_.hash = std::string(util::to_string(hash));
}

void RawSink::start() {
  asio::error_code ignored;
  socket_.native_non_blocking(true, ignored);
  wait_readable();
}

// The read happens in the handler, not in the reactor: the worker's buffer is shared by its
// sinks, so each read must be hashed before any other sink's read can land in it.
void RawSink::wait_readable() {
  socket_.async_wait(asio::socket_base::wait_read, [self = shared_from_this()](const asio::error_code& error) {
    if (error) {
      self->finish(error.message());
      return;
    }
    self->read_ready();
  });
}

// A few reads per wakeup: enough to empty a busy socket in one turn, few enough to stay fair to
// the worker's other sinks.
void RawSink::read_ready() {
  constexpr int kReadsPerWakeup = 8;
  for (int i = 0; i < kReadsPerWakeup; ++i) {
    const ssize_t received = ::recv(socket_.native_handle(), buffer_, buffer_size_, 0);
    if (received == 0) {
      finish({});
      return;
    }
    if (received < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      finish(std::strerror(errno));
      return;
    }
    const auto bytes = static_cast<std::size_t>(received);
    digest_.update(buffer_, bytes);
    transfer_.bytes += bytes;
    ++transfer_.calls;
    progress_->store(transfer_.bytes, std::memory_order_relaxed);
    if (bytes < buffer_size_) break;  // the socket is empty for now
  }
  wait_readable();
}

void RawSink::finish(std::string error) {
  transfer_.error = std::move(error);
  transfer_.elapsed_s = std::chrono::duration<double>(engines::Clock::now() - accepted_).count();
  transfer_.digest = digest_.finish();
  asio::error_code ignored;
  socket_.close(ignored);
  done_(std::move(transfer_));
}

}  // namespace testio::plain
