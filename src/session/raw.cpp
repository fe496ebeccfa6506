#include "session/raw.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "control/channel.hpp"
#include "session/connect.hpp"
#include "session/listen.hpp"
#include "engines/worker_pool.hpp"
#include "net/access_list.hpp"
#include "report/rr_report.hpp"
#include "stats/histogram.hpp"
#include "util/pattern.hpp"
#include "util/unique_fd.hpp"
#include "workloads/raw/raw_sink.hpp"
#include "session/test_streams.hpp"
#include "workloads/rr/rr.hpp"

namespace testio::session {
namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

}  // namespace

int run_raw_server(const config::Config& config, std::ostream& out) {
  asio::io_context io(1);
  tcp::acceptor acceptor = open_acceptor(io, config);
  net::AccessList allowed = net::AccessList::parse(config.allow);
  engines::WorkerPool pool(spec::effective_threads(config.spec.threads, 1u << 16));
  pool.start();
  std::uint32_t open_connections = 0;
  std::uint64_t accepted = 0;

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& error, int) {
    if (error) return;
    asio::error_code ignored;
    acceptor.close(ignored);
    io.stop();
  });
  auto report = [&](report::RawTransfer transfer) {
    if (!transfer.error.empty()) spdlog::warn("raw connection from {} ended early: {}", transfer.peer, transfer.error);
    report::print_raw_transfer(out, transfer, config.output, config.unit);
    --open_connections;
    if (config.one_off) {
      signals.cancel();
      io.stop();
    }
  };
  auto accept_loop = [&]() -> asio::awaitable<void> {
    spdlog::info("raw sink listening on {} ({} digest)", control::endpoint_text(acceptor.local_endpoint()),
                 util::to_string(config.spec.hash));
    for (;;) {
      asio::error_code error;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, error));
      if (!acceptor.is_open()) co_return;
      if (error) {
        spdlog::warn("accept failed: {}", error.message());
        continue;
      }
      asio::error_code ec;
      tcp::endpoint peer = socket.remote_endpoint(ec);
      if (ec) continue;
      std::string peer_text = control::endpoint_text(peer);
      if (!allowed.allows(peer.address())) {
        spdlog::warn("refused a connection from {}: not in --allow", peer_text);
        continue;
      }
      if (open_connections >= config.limits.max_connections) {
        spdlog::warn("refused a connection from {}: {} are open (--max-connections)", peer_text, open_connections);
        continue;
      }
      ++open_connections;
      engines::Worker& worker = pool.worker_for_stream(static_cast<std::uint32_t>(accepted++));
      const tcp protocol = peer.protocol();
      tcp::socket owned(worker.context(), protocol, socket.release());
      auto sink = std::make_shared<workloads::RawSink>(
          std::move(owned), peer_text, config.spec.buffer, config.spec.hash,
          [&io, &report](report::RawTransfer transfer) {
            asio::post(io, [&report, transfer = std::move(transfer)]() mutable { report(std::move(transfer)); });
          });
      worker.post([sink] { sink->start(); });
      if (config.one_off) {  // one connection, then no more
        asio::error_code ignored;
        acceptor.close(ignored);
        co_return;
      }
    }
  };
  asio::co_spawn(io, accept_loop(), asio::detached);
  io.run();
  pool.stop();
  return 0;
}

namespace {

// --rr --raw: the rr workload's client streams, against any plain echo server.
int run_raw_rr(const config::Config& config, std::ostream& out) {
  asio::io_context io(1);
  int exit_code = 1;
  auto run = [&]() -> asio::awaitable<void> {
    const spec::TestSpec& spec = config.spec;
    std::vector<tcp::endpoint> endpoints = co_await resolve(config);
    std::unique_ptr<workloads::TestSide> side = workloads::rr::client_side(spec);
    TestStreams streams(co_await asio::this_coro::executor, side->layout(),
                        spec::effective_threads(spec.threads, spec.connections), {}, spec);
    std::string peer;
    for (std::uint32_t i = 0; i < spec.connections; ++i) {
      tcp::socket socket = co_await connect_any(endpoints, config);
      peer = control::endpoint_text(socket.remote_endpoint());
      streams.add(*side, i, std::move(socket));
    }
    streams.start();
    engines::TestClock clock{Clock::now()};
    if (spec.timed())
      clock.deadline = clock.start + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(spec.duration_s));
    streams.begin(clock);
    auto limit = spec.timed() ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(spec.duration_s)) + std::chrono::seconds(30)
                              : std::chrono::steady_clock::duration(std::chrono::hours(24 * 365));
    const bool finished = co_await streams.all_done(limit);
    report::TestReport report;
    report.sender.wall_s = std::chrono::duration<double>(Clock::now() - clock.start).count();
    streams.stop();
    std::size_t failed = 0;
    for (std::uint32_t i = 0; i < spec.connections; ++i)
      if (streams.measurement().counters(i).failed.load(std::memory_order_relaxed)) ++failed;
    side->add_to_report(report);
    report::print_rr(out, report.rr, peer, config.output);
    if (!finished) spdlog::error("the echo server did not answer every request within the window");
    if (failed) spdlog::error("{} connections ended with an error", failed);
    exit_code = finished && !failed ? 0 : 1;
  };
  asio::co_spawn(io, run(), [&](std::exception_ptr failure) {
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      spdlog::error("{}", error.what());
    }
  });
  io.run();
  return exit_code;
}

}  // namespace

int run_raw_client(const config::Config& config, std::ostream& out) {
  if (config.spec.is("rr")) return run_raw_rr(config, out);
  asio::io_context io(1);
  int exit_code = 1;
  auto send = [&]() -> asio::awaitable<void> {
    util::UniqueFd file;
    if (!config.file.empty()) {
      file = util::UniqueFd(::open(config.file.c_str(), O_RDONLY | O_CLOEXEC));
      if (!file.valid()) throw std::runtime_error("cannot read " + config.file + ": " + std::strerror(errno));
    }
    std::vector<tcp::endpoint> endpoints = co_await resolve(config);
    tcp::socket socket = co_await connect_any(endpoints, config);
    report::RawTransfer transfer;
    transfer.role = "sent";
    transfer.peer = control::endpoint_text(socket.remote_endpoint());
    const spec::TestSpec& spec = config.spec;
    transfer.hash = std::string(util::to_string(spec.hash));
    util::Digest digest(spec.hash);
    auto buffer = std::make_unique_for_overwrite<char[]>(spec.buffer);
    if (!file.valid()) util::fill_pattern(buffer.get(), spec.buffer);
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.duration_s));
    for (;;) {
      std::size_t size = spec.buffer;
      if (file.valid()) {
        ssize_t n = ::read(file.get(), buffer.get(), spec.buffer);
        if (n < 0) throw std::runtime_error("reading " + config.file + " failed: " + std::strerror(errno));
        if (n == 0) break;
        size = static_cast<std::size_t>(n);
      } else if (spec.total_bytes) {
        if (transfer.bytes >= spec.total_bytes) break;
        size = static_cast<std::size_t>(std::min<std::uint64_t>(size, spec.total_bytes - transfer.bytes));
      } else if (Clock::now() >= deadline) {
        break;
      }
      co_await asio::async_write(socket, asio::buffer(buffer.get(), size), asio::use_awaitable);
      digest.update(buffer.get(), size);
      transfer.bytes += size;
      ++transfer.calls;
    }
    // Half-close, then wait for the receiver to close: only then has it read everything.
    socket.shutdown(tcp::socket::shutdown_send);
    char drain[4096];
    asio::error_code error;
    for (;;) {
      co_await control::within(socket.async_read_some(asio::buffer(drain), asio::redirect_error(asio::use_awaitable, error)),
                               std::chrono::seconds(30), "waiting for the receiver to close");
      if (error) break;
    }
    transfer.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    transfer.digest = digest.finish();
    report::print_raw_transfer(out, transfer, config.output, config.unit);
    exit_code = 0;
  };
  asio::co_spawn(io, send(), [&](std::exception_ptr failure) {
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const std::system_error& error) {
      spdlog::error("raw send failed: {}", error.code().message());
    } catch (const std::exception& error) {
      spdlog::error("{}", error.what());
    }
  });
  io.run();
  return exit_code;
}

}  // namespace testio::session
