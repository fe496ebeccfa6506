// `testio -s --raw`: a sink any nc/socat/script can send to. Each accepted connection is read to
// EOF by a RawSink on a worker (hashing there, so senders hash in parallel) and reported in one
// line as it closes; the connections one address has open at once are also reported together
// (PeerGroups). The control thread accepts, admits and prints; the workers only read.
#include "session/raw.hpp"

#include <atomic>
#include <csignal>
#include <memory>
#include <vector>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>

#include "control/channel.hpp"
#include "engines/worker_pool.hpp"
#include "net/access_list.hpp"
#include "session/listen.hpp"
#include "session/log_limiter.hpp"
#include "session/raw_groups.hpp"
#include "util/log.hpp"
#include "workloads/raw/raw_sink.hpp"

namespace testio::session {
namespace {

using asio::ip::tcp;

// The sink's state. Owner: the control thread (io_); the sinks belong to the pool's workers.
class RawServer {
 public:
  RawServer(const config::Config& config, std::ostream& out)
      : config_(config),
        acceptor_(open_acceptor(io_, config)),
        allowed_(net::AccessList::parse(config.allow)),
        pool_(spec::effective_threads(config.spec.threads, 1u << 16)),
        groups_(io_, config.spec.interval_s, out, config.output, config.unit),
        log_(io_),
        out_(out) {
    // Asked before the workers start (Worker::scratch): one read buffer per worker, whatever
    // the number of connections.
    for (unsigned i = 0; i < pool_.size(); ++i) buffers_.push_back(pool_.worker_for_stream(i).scratch(config.spec.buffer));
  }

  int run();

 private:
  asio::awaitable<void> accept_loop();
  bool admit(const tcp::endpoint& peer);
  void start_sink(tcp::socket socket, const tcp::endpoint& peer);
  void finished(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer);
  void stop();

  const config::Config& config_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  net::AccessList allowed_;
  engines::WorkerPool pool_;
  std::vector<char*> buffers_;  // by worker
  PeerGroups groups_;
  LogLimiter log_;
  std::ostream& out_;
  asio::signal_set signals_{io_, SIGINT, SIGTERM};
  std::uint32_t open_connections_ = 0;
  std::uint64_t accepted_ = 0;
};

int RawServer::run() {
  pool_.start();
  signals_.async_wait([this](const asio::error_code& error, int) {
    if (!error) stop();
  });
  asio::co_spawn(io_, accept_loop(), asio::detached);
  io_.run();
  pool_.stop();
  return 0;
}

void RawServer::stop() {
  groups_.flush();
  asio::error_code ignored;
  acceptor_.close(ignored);
  signals_.cancel();
  io_.stop();
}

asio::awaitable<void> RawServer::accept_loop() {
  spdlog::info("raw sink listening on {} ({} digest)", control::endpoint_text(acceptor_.local_endpoint()),
               util::to_string(config_.spec.hash));
  for (;;) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (!acceptor_.is_open()) co_return;
    if (error) {
      log_.warn("accept", "accept failed: " + error.message());
      continue;
    }
    asio::error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec || !admit(peer)) continue;
    start_sink(std::move(socket), peer);
    if (config_.one_off) {  // one connection, then no more
      asio::error_code ignored;
      acceptor_.close(ignored);
      co_return;
    }
  }
}

// --allow and the connection cap; refusals are logged at most once a second per reason.
bool RawServer::admit(const tcp::endpoint& peer) {
  const std::string peer_text = control::endpoint_text(peer);
  if (!allowed_.allows(peer.address())) {
    log_.warn("allow", "refused a connection from " + peer_text + ": not in --allow");
    return false;
  }
  if (open_connections_ >= config_.limits.max_connections) {
    log_.warn("cap", "refused a connection from " + peer_text + ": " + std::to_string(open_connections_) +
                         " are open (--max-connections)");
    return false;
  }
  return true;
}

void RawServer::start_sink(tcp::socket socket, const tcp::endpoint& peer) {
  ++open_connections_;
  const std::uint64_t id = accepted_++;
  engines::Worker& worker = pool_.worker_for_stream(static_cast<std::uint32_t>(id));
  tcp::socket owned(worker.context(), peer.protocol(), socket.release());
  auto progress = std::make_shared<std::atomic<std::uint64_t>>(0);
  const std::string address = control::address_text(peer.address());
  groups_.joined(address, id, progress);
  auto done = [this, address, id](report::RawTransfer transfer) {
    asio::post(io_, [this, address, id, transfer = std::move(transfer)] { finished(address, id, transfer); });
  };
  auto sink = std::make_shared<workloads::RawSink>(std::move(owned), control::endpoint_text(peer),
                                                   buffers_[worker.index()], config_.spec.buffer, config_.spec.hash,
                                                   std::move(progress), std::move(done));
  worker.post([sink] { sink->start(); });
}

void RawServer::finished(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer) {
  if (!transfer.error.empty()) spdlog::warn("raw connection from {} ended early: {}", transfer.peer, transfer.error);
  report::print_raw_transfer(out_, transfer, config_.output, config_.unit);
  groups_.left(address, id, transfer);
  --open_connections_;
  if (config_.one_off) stop();
}

}  // namespace

int run_raw_server(const config::Config& config, std::ostream& out) {
  RawServer server(config, out);
  return server.run();
}

}  // namespace testio::session
