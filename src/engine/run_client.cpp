#include "engine/run_client.hpp"

#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <optional>
#include <memory>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "control/auth.hpp"
#include "control/channel.hpp"
#include "control/protocol.hpp"
#include "engine/client_signals.hpp"
#include "engine/completion_latch.hpp"
#include "engine/connect.hpp"
#include "engine/measurement.hpp"
#include "engine/payload.hpp"
#include "engine/test_start.hpp"
#include "engine/worker_pool.hpp"
#include "net/socket_options.hpp"
#include "report/rr_report.hpp"
#include "workloads/tcp_rr.hpp"
#include "workloads/tcp_stream.hpp"

namespace testio::engine {
namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

constexpr auto kHandshakeLimit = 10s;
constexpr auto kResultsLimit = 60s;   // receivers drain what is still in flight, then answer
constexpr auto kWindowGrace = 30s;    // beyond -O + -t before the client gives up on its senders
constexpr auto kSenderStopLimit = 5s; // for senders to stop once the test is being abandoned

control::TestRequest request_from(const config::Config& config) {
  control::TestRequest request;
  request.connections = config.connections;
  request.duration_s = (config.total_bytes || (config.rr && config.messages)) ? 0 : config.duration_s;
  request.total_bytes = config.total_bytes;
  request.threads = config.threads;
  request.client_threads = config::effective_threads(config.threads, config.connections);
  request.buffer = config.buffer;
  request.window = config.window;
  request.recv_mode = config.recv_mode;
  request.interval_s = config.interval_s;
  request.omit_s = config.omit_s;
  request.rr = config.rr;
  request.msize = config.rr ? config.msize : 0;
  request.depth = config.depth;
  request.client_version = TESTIO_VERSION;
  return request;
}

asio::awaitable<void> send_preamble(tcp::socket& socket, const control::Preamble& preamble) {
  control::PreambleBytes bytes = control::encode_preamble(preamble);
  co_await control::within(asio::async_write(socket, asio::buffer(bytes), asio::use_awaitable),
                           kHandshakeLimit, "sending the connection preamble");
}

std::vector<std::uint32_t> mismatches(const control::SideResults& sent, const control::SideResults& received) {
  std::vector<std::uint32_t> streams;
  for (std::size_t i = 0; i < sent.streams.size() && i < received.streams.size(); ++i)
    if (sent.streams[i].bytes != received.streams[i].bytes) streams.push_back(static_cast<std::uint32_t>(i));
  return streams;
}

report::SideReport side_report(control::SideResults results) {
  report::SideReport side;
  side.present = true;
  side.totals = std::move(results.streams);
  side.intervals = std::move(results.intervals);
  side.cpu = results.cpu;
  side.wall_s = results.wall_s;
  side.congestion = std::move(results.congestion);
  return side;
}

std::string describe(const std::exception& error);

asio::awaitable<int> client_test(const config::Config& config, report::Reporter& reporter,
                                 Interruption& interruption) {
  auto executor = co_await asio::this_coro::executor;
  const std::uint32_t connections = config.connections;

  // 1. Control connection: preamble, test request, the server's answer.
  std::vector<tcp::endpoint> endpoints = co_await resolve(config);
  tcp::socket control_socket = co_await connect_any(endpoints, config);
  const tcp::endpoint server = control_socket.remote_endpoint();
  const control::Preamble control_preamble{control::ConnectionKind::control};
  co_await send_preamble(control_socket, control_preamble);
  // The client trusts the server it chose a little more: results carry every interval.
  control::ControlChannel control(std::move(control_socket), config.limits.max_result_frame);
  spdlog::info("connected to {}", control.peer());
  const control::ServerHello hello = control::parse_server_hello(co_await control.read(kHandshakeLimit));
  control::TestRequest request = request_from(config);
  if (hello.auth == "hmac-sha256") {
    if (config.psk_file.empty())
      throw std::runtime_error("the server requires a pre-shared key: give it with --psk-file");
    bool readable_by_others = false;
    std::string key = control::load_psk(config.psk_file, readable_by_others);
    if (readable_by_others) spdlog::warn("key file {} is readable by group or others; chmod 600 it", config.psk_file);
    request.auth = control::auth_response(key, hello.nonce);
  } else if (!config.psk_file.empty()) {
    spdlog::warn("the server does not ask for a key: --psk-file is unused");
  }
  co_await control.write(control::to_json(request));
  control::TestAccepted accepted =
      control::parse_test_accepted(co_await control.read(kHandshakeLimit), config.limits);

  // 2. Data connections, dealt round-robin to the workers.
  const unsigned threads = request.client_threads;
  // A byte-count or message-count test has no window: it ends when the last stream does.
  const bool counted = config.total_bytes || (config.rr && config.messages);
  const double window_s = counted ? 0 : config.omit_s + config.duration_s;
  Measurement measurement(connections, config.interval_s, config.omit_s, window_s);
  const std::size_t payload_size = config.rr ? config.msize : config.buffer;
  std::vector<std::unique_ptr<char[]>> payloads;
  for (unsigned i = 0; i < threads; ++i) payloads.push_back(make_payload(payload_size));
  // One histogram per connection, written by its worker, merged after the workers have stopped.
  auto latencies = std::make_unique<stats::LatencyHistogram[]>(config.rr ? connections : 0);
  auto senders_done = std::make_shared<CompletionLatch>(executor, connections);
  const std::vector<tcp::endpoint> server_only{server};
  std::string clamp_warning;
  auto apply_window = [&](tcp::socket& socket) {
    if (!config.window) return;
    clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), config.window));
  };
  report::StartInfo start = start_info(request, accepted.server_threads, /*from_client=*/true);
  start.peer = control::endpoint_text(server);
  start.connecting_host = config.host;
  start.connecting_port = config.port;
  start.messages = config.rr ? config.messages : 0;
  WorkerPool pool(threads);
  for (std::uint32_t i = 0; i < connections; ++i) {
    tcp::socket socket = co_await connect_any(server_only, config, apply_window);
    const control::Preamble data_preamble{control::ConnectionKind::data, control::kProtocolVersion,
                                          accepted.test_id, i};
    co_await send_preamble(socket, data_preamble);
    note_connection(start, socket);
    Worker& worker = pool.worker_for_stream(i);
    const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
    tcp::socket owned(worker.context(), protocol, socket.release());
    measurement.watch_socket(i, owned.native_handle());
    auto done = [senders_done] { senders_done->count_down(); };
    if (config.rr)
      worker.add_stream(std::make_unique<workloads::RrClient>(std::move(owned), measurement.counters(i),
                                                              payloads[worker.index()].get(), config.msize,
                                                              config.depth, config.messages, latencies[i], done));
    else
      worker.add_stream(std::make_unique<workloads::TcpSender>(
          std::move(owned), measurement.counters(i), payloads[worker.index()].get(), config.buffer,
          stats::share_of_total(config.total_bytes, connections, i), done));
  }
  if (!clamp_warning.empty()) spdlog::warn("{}", clamp_warning);
  pool.start();

  // 3. The server says start once it holds every stream.
  control::parse_start(co_await control.read(kHandshakeLimit));
  workloads::TestClock clock{workloads::Clock::now()};
  start.timestamp = static_cast<std::int64_t>(std::time(nullptr));
  if (!counted)
    clock.deadline = clock.start + std::chrono::duration_cast<workloads::Clock::duration>(
                                       std::chrono::duration<double>(window_s));
  measurement.begin(clock);
  pool.begin(clock);
  reporter.start(start);
  spdlog::info("test started: {} connections over {} threads", connections, threads);

  // 4. Senders run their window and half-close, while intervals tick. Anything arriving on the
  // control connection meanwhile is the server ending the test (an error frame, or a close).
  // From here on a failure still reports what this side measured, marked incomplete.
  interruption.end_window = [&pool] { pool.end_window(); };
  report::TestReport report;
  report.start = start;
  std::optional<control::SideResults> sent;
  std::optional<control::SideResults> received;
  try {
    auto limit = counted ? std::chrono::steady_clock::duration(std::chrono::hours(24 * 365))
                                    : std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(window_s)) + kWindowGrace;
    auto outcome = co_await (senders_done->wait(limit) || control::capture(control.read(limit)) ||
                             measurement.sample(reporter));
    if (outcome.index() == 1) {
      auto& message = std::get<1>(outcome);
      if (message.error) std::rethrow_exception(message.error);
      control::fail_unexpected(*message.value, "during the test");
    }
    if (outcome.index() != 0 || !std::get<0>(outcome))
      throw std::runtime_error("the senders did not finish within the window");
    interruption.end_window = nullptr;

    // 5. Exchange figures: ours go first, the server answers once every stream reached EOF.
    sent = measurement.finish(reporter, /*sender=*/true);
    control::SideResults sent_summary;  // the server needs the totals and CPU, not our intervals
    sent_summary.streams = sent->streams;
    sent_summary.cpu = sent->cpu;
    sent_summary.wall_s = sent->wall_s;
    sent_summary.congestion = sent->congestion;
    co_await control.write(control::to_json(sent_summary, "sender_done"));
    received = control::parse_side_results(co_await control.read(kResultsLimit), "results", connections);
  } catch (const std::exception& error) {
    report.incomplete = true;
    report.ended_because = describe(error);
  }
  interruption.end_window = nullptr;
  if (report.incomplete) {
    // Stop the senders (they may still be writing) and keep what they counted.
    pool.end_window();
    co_await senders_done->wait(kSenderStopLimit);
    if (!sent) sent = measurement.finish(reporter, /*sender=*/true);
    spdlog::error("{}", report.ended_because);
  } else if (interruption.signal) {
    report.incomplete = true;
    report.ended_because = std::string("interrupted by ") + (interruption.signal == SIGINT ? "SIGINT" : "SIGTERM");
    spdlog::warn("{}: the figures cover the time run", report.ended_because);
  }
  pool.stop();
  if (config.rr) {
    stats::LatencyHistogram all;
    for (std::uint32_t i = 0; i < connections; ++i) all.merge(latencies[i]);
    report.rr = report::summarize_rr(all, config.msize, config.depth, sent->wall_s);
  }

  // 6. Report.
  if (received) {
    report.mismatched_streams = mismatches(*sent, *received);
    report.tests_beside = received->tests_beside;
    report.receiver = side_report(std::move(*received));
  }
  report.sender = side_report(std::move(*sent));
  reporter.end(report);
  if (report.incomplete) co_return 1;

  for (std::uint32_t stream : report.mismatched_streams)
    spdlog::error("connection {}: sent {} bytes but the server received {}", stream + 1,
                  report.sender.totals[stream].bytes, report.receiver.totals[stream].bytes);
  std::size_t failed = stats::summarize(report.sender.totals).failed_streams +
                       stats::summarize(report.receiver.totals).failed_streams;
  if (failed) spdlog::error("{} connections ended with an error", failed);
  co_return (!report.mismatched_streams.empty() || failed) ? 1 : 0;
}

std::string describe(const std::exception& error) {
  if (auto* multiple = dynamic_cast<const asio::multiple_exceptions*>(&error)) {
    try {
      std::rethrow_exception(multiple->first_exception());
    } catch (const std::exception& first) {
      return describe(first);
    }
  }
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

int run_client(const config::Config& config, report::Reporter& reporter) {
  return run_client_test([&](Interruption& interruption) { return client_test(config, reporter, interruption); },
                         reporter, describe);
}

}  // namespace testio::engine
