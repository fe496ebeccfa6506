#include "engine/run_client.hpp"

#include <chrono>
#include <iostream>
#include <memory>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "control/channel.hpp"
#include "control/protocol.hpp"
#include "engine/completion_latch.hpp"
#include "engine/connect.hpp"
#include "engine/worker_pool.hpp"
#include "net/socket_options.hpp"
#include "report/text_reporter.hpp"
#include "workloads/tcp_stream.hpp"

namespace testio::engine {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

constexpr auto kHandshakeLimit = 10s;
constexpr auto kResultsLimit = 60s;   // receivers drain what is still in flight, then answer
constexpr auto kWindowGrace = 30s;    // beyond -t before the client gives up on its own senders

control::TestRequest request_from(const config::Config& config) {
  control::TestRequest request;
  request.connections = config.connections;
  request.duration_s = config.total_bytes ? 0 : config.duration_s;
  request.total_bytes = config.total_bytes;
  request.threads = config.threads;
  request.client_threads = config::effective_threads(config.threads, config.connections);
  request.buffer = config.buffer;
  request.window = config.window;
  request.recv_mode = config.recv_mode;
  request.client_version = TESTIO_VERSION;
  return request;
}

asio::awaitable<void> send_preamble(tcp::socket& socket, const control::Preamble& preamble) {
  control::PreambleBytes bytes = control::encode_preamble(preamble);
  co_await control::within(asio::async_write(socket, asio::buffer(bytes), asio::use_awaitable),
                           kHandshakeLimit, "sending the connection preamble");
}

// Sender payload: one read-only buffer per worker, shared by its streams. Not all zeros, so a
// compressing or deduplicating middlebox cannot flatter the result.
std::unique_ptr<char[]> make_payload(std::size_t size) {
  auto payload = std::make_unique_for_overwrite<char[]>(size);
  std::uint32_t state = 0x9e3779b9u;
  for (std::size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    payload[i] = static_cast<char>(state >> 24);
  }
  return payload;
}

// Streams whose byte counts differ between the sender and the receiver: each is a lost byte.
int count_mismatches(const std::vector<stats::StreamFigures>& sent,
                     const std::vector<stats::StreamFigures>& received) {
  int mismatches = 0;
  for (std::size_t i = 0; i < sent.size() && i < received.size(); ++i) {
    if (sent[i].bytes == received[i].bytes) continue;
    ++mismatches;
    spdlog::error("connection {}: sent {} bytes but the server received {}", i + 1, sent[i].bytes,
                  received[i].bytes);
  }
  return mismatches;
}

asio::awaitable<int> client_test(const config::Config& config) {
  auto executor = co_await asio::this_coro::executor;
  const std::uint32_t connections = config.connections;

  // 1. Control connection: preamble, test request, the server's answer.
  std::vector<tcp::endpoint> endpoints = co_await resolve(config);
  tcp::socket control_socket = co_await connect_any(endpoints, config);
  const tcp::endpoint server = control_socket.remote_endpoint();
  const control::Preamble control_preamble{control::ConnectionKind::control};
  co_await send_preamble(control_socket, control_preamble);
  control::ControlChannel control(std::move(control_socket), config.limits.max_frame);
  spdlog::info("connected to {}", control.peer());
  const control::TestRequest request = request_from(config);
  co_await control.write(control::to_json(request));
  control::TestAccepted accepted =
      control::parse_test_accepted(co_await control.read(kHandshakeLimit), config.limits);

  // 2. Data connections, dealt round-robin to the workers.
  const unsigned threads = config::effective_threads(config.threads, connections);
  auto counters = std::make_unique<stats::StreamCounters[]>(connections);
  std::vector<std::unique_ptr<char[]>> payloads;
  for (unsigned i = 0; i < threads; ++i) payloads.push_back(make_payload(config.buffer));
  auto senders_done = std::make_shared<CompletionLatch>(executor, connections);
  const std::vector<tcp::endpoint> server_only{server};
  std::string clamp_warning;
  auto apply_window = [&](tcp::socket& socket) {
    if (!config.window) return;
    clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), config.window));
  };
  WorkerPool pool(threads);
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket socket = co_await connect_any(server_only, config, apply_window);
    const control::Preamble data_preamble{control::ConnectionKind::data, control::kProtocolVersion,
                                          accepted.test_id, i};
    co_await send_preamble(socket, data_preamble);
    Worker& worker = pool.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    worker.add_stream(std::make_unique<workloads::TcpSender>(
        std::move(owned), counters[i], payloads[worker.index()].get(), config.buffer,
        stats::share_of_total(config.total_bytes, connections, i),
        [senders_done] { senders_done->count_down(); }));
  }
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  pool.start();

  // 3. The server says start once it holds every stream.
  control::parse_start(co_await control.read(kHandshakeLimit));
  workloads::TestClock clock{workloads::Clock::now()};
  if (!config.total_bytes)
    clock.deadline = clock.start + std::chrono::duration_cast<workloads::Clock::duration>(
                                       std::chrono::duration<double>(config.duration_s));
  pool.begin(clock);
  spdlog::info("test started: {} connections over {} threads", connections, threads);

  // 4. Senders run their window and half-close. Anything arriving on the control connection
  // meanwhile is the server ending the test (an error frame, or a close when it died).
  auto limit = config.total_bytes ? std::chrono::steady_clock::duration(std::chrono::hours(24 * 365))
                                  : std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(config.duration_s)) + kWindowGrace;
  auto outcome = co_await (senders_done->wait(limit) || control::capture(control.read(limit)));
  if (outcome.index() == 1) {
    auto& message = std::get<1>(outcome);
    if (message.error) std::rethrow_exception(message.error);
    control::fail_unexpected(*message.value, "during the test");
  }
  if (!std::get<0>(outcome)) throw std::runtime_error("the senders did not finish within the window");

  // 5. Exchange figures: ours go first, the server answers once every stream reached EOF.
  control::StreamsReport sent;
  for (std::uint32_t i = 0; i < connections; ++i) {
    stats::StreamFigures figures = stats::figures_from(counters[i], 0);
    figures.start_s = 0;  // a sender's window opens at start, not at its first completed write
    sent.streams.push_back(figures);
  }
  co_await control.write(control::to_json(sent, "sender_done"));
  control::StreamsReport received = control::parse_streams_report(
      co_await control.read(kResultsLimit), "results", connections);
  pool.stop();

  // 6. Report.
  report::TestReport report;
  report.from_client = true;
  report.peer = control::endpoint_text(server);
  report.connections = connections;
  report.client_threads = threads;
  report.server_threads = accepted.server_threads;
  report.duration_s = config.total_bytes ? 0 : config.duration_s;
  report.total_bytes = config.total_bytes;
  report.buffer = config.buffer;
  report.window = config.window;
  report.recv_mode = config.recv_mode;
  report.sent = sent.streams;
  report.received = received.streams;
  report.per_stream_lines = config.verbosity > 0 || connections <= 4;
  report::print_text_report(std::cout, report);

  stats::SideSummary sent_sum = stats::summarize(report.sent);
  stats::SideSummary received_sum = stats::summarize(report.received);
  int mismatches = count_mismatches(report.sent, report.received);
  if (sent_sum.failed_streams || received_sum.failed_streams)
    spdlog::error("{} sending and {} receiving connections ended with an error",
                  sent_sum.failed_streams, received_sum.failed_streams);
  co_return (mismatches || sent_sum.failed_streams || received_sum.failed_streams) ? 1 : 0;
}

std::string describe(const std::exception& error) {
  if (auto* system = dynamic_cast<const std::system_error*>(&error)) {
    if (system->code() == asio::error::eof || system->code() == asio::error::connection_reset)
      return "the server closed the control connection: the test ended early";
    return system->code().message();
  }
  if (dynamic_cast<const control::PeerError*>(&error))
    return std::string("the server ended the test: ") + error.what();
  return error.what();
}

}  // namespace

int run_client(const config::Config& config) {
  asio::io_context io(1);
  int exit_code = 1;
  asio::co_spawn(io, client_test(config), [&](std::exception_ptr failure, int code) {
    if (!failure) {
      exit_code = code;
      return;
    }
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      spdlog::error("{}", describe(error));
    }
  });
  io.run();
  return exit_code;
}

}  // namespace testio::engine
