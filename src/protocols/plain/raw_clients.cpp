// `testio -s --raw`: a sink any nc/socat/script can send to, as a peer of the one server
// (server.cpp: the acceptor, --allow, signals and -1 are its). Each connection is read to EOF by a
// RawSink on a worker (hashing there, so senders hash in parallel) and reported in one line as it
// closes; the connections one address has open at once are also reported together (PeerGroups).
// The control thread admits and prints; the workers only read.
#include "protocols/plain/raw.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/deadline.hpp"
#include "lifecycle/connect.hpp"
#include "engines/worker_pool.hpp"
#include "lifecycle/log_limiter.hpp"
#include "protocols/plain/raw_groups.hpp"
#include "util/log.hpp"
#include "protocols/plain/raw_sink.hpp"

namespace testio::plain {
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
  if (!transfer.error.empty()) spdlog::warn("raw connection from {} ended early: {}", transfer.peer, transfer.error);
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

}  // namespace testio::plain
