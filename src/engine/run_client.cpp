#include "engine/run_client.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <csignal>
#include <ctime>
#include <functional>
#include <optional>
#include <memory>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "control/auth.hpp"
#include "control/channel.hpp"
#include "control/protocol.hpp"
#include "engine/bulk_streams.hpp"
#include "engine/client_signals.hpp"
#include "engine/send_setup.hpp"
#include "engine/completion_latch.hpp"
#include "engine/connect.hpp"
#include "engine/directions.hpp"
#include "engine/test_start.hpp"
#include "engine/transfer_setup.hpp"
#include "engine/worker_pool.hpp"
#include "net/nic_counters.hpp"
#include "net/socket_options.hpp"
#include "report/rr_report.hpp"
#include "util/mapped_file.hpp"
#include "util/pattern.hpp"
#include "util/unique_fd.hpp"
#include "workloads/tcp_crr.hpp"
#include "workloads/tcp_rr.hpp"
#include "workloads/tcp_stream.hpp"
#include "workloads/uring_loop.hpp"

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
  // Workers for every data connection this side opens (twice the count with --bidir).
  request.client_threads = config::worker_threads(config.engine, config.threads,
                                                  config.bidir ? 2 * config.connections : config.connections);
  request.buffer = config.buffer;
  request.window = config.window;
  request.recv_mode = config.recv_mode;
  request.engine = config.engine;
  request.rate_lowat = config.rate_lowat;
  request.direction = config.direction();
  request.send_mode = config.send_mode;
  request.rate_bps = config.rate_bps;
  request.fq_rate_bps = config.fq_rate_bps;
  request.interval_s = config.interval_s;
  request.omit_s = config.omit_s;
  request.rr = config.rr;
  request.msize = config.rr ? config.msize : 0;
  request.depth = config.depth;
  request.transfers = config.transfers;
  request.transfer_size = config.transfer_size;
  request.reuse = config.reuse;
  if (config.transfers) request.duration_s = 0;
  if (!config.file.empty()) request.hash = config.hash;
  request.congestion = config.congestion;
  request.no_delay = config.no_delay;
  request.cpus = config.cpus;
  request.client_version = TESTIO_VERSION;
  request.iface_stats = config.iface_stats;
  request.iface_names = config.iface_names;
  return request;
}

asio::awaitable<void> send_preamble(tcp::socket& socket, const control::Preamble& preamble) {
  control::PreambleBytes bytes = control::encode_preamble(preamble);
  co_await control::within(asio::async_write(socket, asio::buffer(bytes), asio::use_awaitable),
                           kHandshakeLimit, "sending the connection preamble");
}

std::string describe(const std::exception& error);

// `sending`: --fq-rate paces what this side sends; a connection it only reads from keeps its ACKs unpaced.
net::TcpTuning tuning_of(const config::Config& config, bool sending = true) {
  net::TcpTuning tuning;
  tuning.congestion = config.congestion;
  tuning.mss = config.mss;
  tuning.no_delay = config.no_delay;
  tuning.fq_rate_bps = sending ? config.fq_rate_bps : 0;
  return tuning;
}

// The client's data streams for one test, by workload. Owner: the lifecycle below.
struct ClientStreams {
  std::vector<std::unique_ptr<char[]>> payloads;         // bulk and rr: one per worker
  std::unique_ptr<stats::LatencyHistogram[]> latencies;  // rr: one per connection
  std::optional<util::MappedFile> file;                  // -F
  std::unique_ptr<workloads::TransferPlan> plan;         // --transfers
  std::unique_ptr<workloads::TransferTally[]> tallies;   // --transfers: one per slot
  util::UniqueFd send_file;                              // --send-mode sendfile: the file, or a memfd
  config::SendMode send_mode = config::SendMode::send;   // as used: zerocopy may fall back
};

// Connects stream `i`, says which test it belongs to, and moves it to its worker.
asio::awaitable<tcp::socket> open_data_connection(const config::Config& config, const tcp::endpoint& server,
                                                  std::uint64_t test_id, std::uint32_t i, bool sending,
                                                  Worker& worker, report::StartInfo& start,
                                                  std::string& clamp_warning) {
  // Before connect: the SYN carries the window scale and the MSS these settle.
  auto prepare = [&](tcp::socket& socket) {
    if (config.window)
      clamp_warning = net::clamp_warning(net::set_socket_buffers(socket.native_handle(), config.window));
    net::apply_tuning(socket.native_handle(), tuning_of(config, sending));
  };
  const std::vector<tcp::endpoint> server_only{server};
  const std::uint16_t source_port = config.cport_first ? static_cast<std::uint16_t>(config.cport_first + i) : 0;
  tcp::socket socket = co_await connect_any(server_only, config, prepare, source_port);
  const control::Preamble data_preamble{control::ConnectionKind::data, control::kProtocolVersion, test_id, i};
  co_await send_preamble(socket, data_preamble);
  note_connection(start, socket);
  const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
  co_return tcp::socket(worker.context(), protocol, socket.release());
}

asio::awaitable<int> client_test(const config::Config& config, report::Reporter& reporter,
                                 Interruption& interruption) {
  auto executor = co_await asio::this_coro::executor;
  const std::uint32_t connections = config.connections;
  const bool transfers = config.transfers > 0;
  ClientStreams streams;
  control::TestRequest request = request_from(config);
  if (!config.file.empty()) {
    streams.file.emplace(config.file);
    if (streams.file->size() < connections)
      throw std::runtime_error(config.file + " has " + std::to_string(streams.file->size()) +
                               " bytes: fewer than one per connection");
    request.total_bytes = streams.file->size();
    request.duration_s = 0;
  }

  if (!config.save_dir.empty()) check_save_directory(config);
  streams.send_mode = config.send_mode;
  const DirectionLayout layout = DirectionLayout::of(config.direction(), connections);
  if (config.send_mode == config::SendMode::sendfile && layout.forward)
    streams.send_file = open_send_file(config.file, config.buffer);

  if (config.engine == config::Engine::uring) {
    const bool zerocopy = config.send_mode == config::SendMode::zerocopy;
    if (std::string reason = workloads::uring_unusable_reason(zerocopy); !reason.empty())
      throw std::runtime_error(reason);
  }

  // 1. Control connection: preamble, test request, the server's answer.
  std::vector<tcp::endpoint> endpoints = co_await resolve(config);
  net::check_tuning(tuning_of(config), endpoints.front().address().is_v4() ? AF_INET : AF_INET6);
  tcp::socket control_socket = co_await connect_any(endpoints, config);
  const tcp::endpoint server = control_socket.remote_endpoint();
  if (transfers) streams.plan = make_transfer_plan(config, server);
  const control::Preamble control_preamble{control::ConnectionKind::control};
  co_await send_preamble(control_socket, control_preamble);
  // The client trusts the server it chose a little more: results carry every interval.
  control::ControlChannel control(std::move(control_socket), config.limits.max_result_frame);
  spdlog::info("connected to {}", control.peer());
  const control::ServerHello hello = control::parse_server_hello(co_await control.read(kHandshakeLimit));
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
  nlohmann::json answer = co_await control.read(kHandshakeLimit);
  control::TestAccepted accepted;
  try {
    accepted = control::parse_test_accepted(answer, config.limits);
  } catch (const control::PeerError& refusal) {
    throw std::runtime_error(std::string("the server refused the test: ") + refusal.what());
  }

  // 2. Data streams, dealt round-robin to the workers. Bulk and rr connect here; transfer slots
  // connect for each transfer once the test starts. -R and --bidir add receiving connections.
  const unsigned threads = request.client_threads;
  // A byte-count, message-count or transfer-count test has no window: it ends when the last stream does.
  const bool counted = request.total_bytes || (config.rr && config.messages) || transfers;
  const double window_s = counted ? 0 : config.omit_s + config.duration_s;
  DirectedMeasurement measurement(layout, config.interval_s, config.omit_s, window_s);
  if (!transfers)
    for (unsigned i = 0; i < threads; ++i)
      streams.payloads.push_back(util::make_pattern(config.rr ? config.msize : config.buffer));
  // One histogram or tally per connection, written by its worker, merged after the workers stopped.
  if (config.rr) streams.latencies = std::make_unique<stats::LatencyHistogram[]>(connections);
  if (transfers) streams.tallies = std::make_unique<workloads::TransferTally[]>(connections);
  auto streams_done = std::make_shared<CompletionLatch>(executor, layout.total());
  std::string clamp_warning;
  report::StartInfo start = start_info(request, accepted.server_threads, /*from_client=*/true);
  start.peer = control::endpoint_text(server);
  start.connecting_host = config.host;
  start.connecting_port = config.port;
  start.messages = config.rr ? config.messages : 0;
  start.mss_requested = config.mss;
  start.server_cpus = accepted.server_cpus;
  start.cport_first = config.cport_first;
  start.cport_last = config.cport_first ? static_cast<std::uint16_t>(config.cport_first + layout.total() - 1) : 0;
  start.rate_bps = config.rate_bps;
  start.send_mode = streams.send_mode;
  WorkerPool pool(threads, config.cpus);
  for (std::uint32_t i = 0; i < layout.total(); ++i) {
    Worker& worker = pool.worker_for_stream(i);
    auto done = [streams_done] { streams_done->count_down(); };
    if (transfers) {
      const control::Preamble slot{control::ConnectionKind::data, control::kProtocolVersion, accepted.test_id, i};
      worker.add_stream(std::make_unique<workloads::TransferClient>(worker.context(), measurement.counters(i),
                                                                    *streams.plan, control::encode_preamble(slot),
                                                                    streams.tallies[i], done));
      continue;
    }
    const bool sending = layout.is_forward(i);
    tcp::socket owned = co_await open_data_connection(config, server, accepted.test_id, i, sending, worker, start,
                                                      clamp_warning);
    measurement.watch_socket(i, owned.native_handle());
    if (i == 0 && config.iface_stats)
      measurement.live().watch_nics(net::choose_nics(config.iface_names, owned.local_endpoint().data()));
    const char* payload = streams.payloads[worker.index()].get();
    if (config.rr) {
      // A connection alone on its thread blocks in send/recv rather than paying an epoll_wait per message.
      const bool alone = connections <= threads;
      worker.add_stream(std::make_unique<workloads::RrClient>(std::move(owned), measurement.counters(i), payload,
                                                              config.msize, config.depth, config.messages,
                                                              streams.latencies[i], done,
                                                              alone ? &worker.signals() : nullptr));
      continue;
    }
    if (!sending) {
      ReceiverSpec spec{config.recv_mode, static_cast<std::size_t>(config.buffer), std::nullopt,
                        config.rate_lowat && workloads::receivers_batch_wakeups(layout.total(), threads)};
      add_receiver(worker, config.engine, std::move(owned), measurement.counters(i), std::move(spec), done);
      continue;
    }
    // -F: connection i carries its contiguous part of the file and hashes it. Otherwise the
    // worker's generated block, repeated.
    const bool from_file = streams.file.has_value();
    const std::uint64_t part = stats::share_of_total(request.total_bytes, layout.forward, i);
    const std::uint64_t offset = from_file ? stats::offset_of_share(request.total_bytes, layout.forward, i) : 0;
    if (streams.send_mode == config::SendMode::zerocopy && !enable_zerocopy(owned)) {
      spdlog::warn("SO_ZEROCOPY is not supported here ({}): sending by copy", std::strerror(errno));
      streams.send_mode = start.send_mode = config::SendMode::send;
    }
    SenderSpec spec;
    spec.payload = from_file ? streams.file->data() + offset : payload;
    spec.payload_size = from_file ? static_cast<std::size_t>(part) : static_cast<std::size_t>(config.buffer);
    spec.pacing = workloads::SendPacing{config.rate_bps};
    spec.chunk = spec.pacing.chunk(config.buffer);
    spec.quota = part;
    spec.rate_lowat = config.rate_lowat;
    if (from_file) spec.digest.emplace(workloads::StreamDigest{util::Digest(config.hash), &measurement.digest(i)});
    spec.source = workloads::SendSource{streams.send_mode, streams.send_file.get(), offset};
    add_sender(worker, config.engine, std::move(owned), measurement.counters(i), std::move(spec), done);
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
  const bool live_forward = layout.live_forward();
  reporter.start(direction_start(start, layout.connections(live_forward), live_forward == start.local_is_sender));
  spdlog::info("test started: {} connections over {} threads", layout.total(), threads);

  // 4. Streams run (senders their window, then a half-close; receivers to the server's
  // half-close; transfer slots until the count is taken) while intervals tick. Anything arriving
  // on the control connection meanwhile is the server ending the test (an error frame, or a
  // close). From here on a failure still reports what this side measured, marked incomplete.
  bool stop_sent = false;
  interruption.end_window = [&] {
    pool.end_window();
    // The server's senders end their window when told. The write starts on the next turn of
    // this thread's loop and is one small frame, done before any later control write.
    if (layout.reverse && !stop_sent) {
      stop_sent = true;
      asio::co_spawn(executor, control.write(control::stop_message()), asio::detached);
    }
  };
  bool incomplete = false;  // the test ended early: the figures cover the time run
  std::optional<control::DirectedResults> mine;
  std::optional<control::DirectedResults> theirs;
  std::string ended_because;
  try {
    auto limit = counted ? std::chrono::steady_clock::duration(std::chrono::hours(24 * 365))
                         : std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(window_s)) + kWindowGrace;
    auto outcome = co_await (streams_done->wait(limit) || control::capture(control.read(limit)) ||
                             measurement.sample(reporter));
    if (outcome.index() == 1) {
      auto& message = std::get<1>(outcome);
      if (message.error) std::rethrow_exception(message.error);
      control::fail_unexpected(*message.value, "during the test");
    }
    if (outcome.index() != 0 || !std::get<0>(outcome))
      throw std::runtime_error(layout.reverse ? "the connections did not finish within the window"
                                              : "the senders did not finish within the window");
    interruption.end_window = nullptr;

    // 5. Exchange figures: ours go first, the server answers once every stream reached EOF.
    mine = measurement.finish(reporter, /*local_sends_forward=*/start.local_is_sender);
    // The server needs the totals and CPU, not our intervals.
    auto summary_of = [](const control::SideResults& side) {
      control::SideResults summary;
      summary.streams = side.streams;
      summary.cpu = side.cpu;
      summary.wall_s = side.wall_s;
      summary.congestion = side.congestion;
      summary.digests = side.digests;
      summary.cores = side.cores;
      return summary;
    };
    control::DirectedResults summary;
    summary.forward = summary_of(mine->forward);
    if (mine->reverse) summary.reverse = summary_of(*mine->reverse);
    const char* done_type = transfers ? "transfers_done" : "sender_done";
    co_await control.write(control::to_json(summary, done_type));
    theirs = control::parse_directed_results(co_await control.read(kResultsLimit), "results", layout.forward,
                                             layout.reverse);
  } catch (const std::exception& error) {
    incomplete = true;
    ended_because = describe(error);
  }
  interruption.end_window = nullptr;
  if (incomplete) {
    // Stop the streams (senders may still be writing) and keep what they counted.
    pool.end_window();
    co_await streams_done->wait(kSenderStopLimit);
    if (!mine) mine = measurement.finish(reporter, /*local_sends_forward=*/start.local_is_sender);
    spdlog::error("{}", ended_because);
  } else if (interruption.signal) {
    incomplete = true;
    ended_because = std::string("interrupted by ") + (interruption.signal == SIGINT ? "SIGINT" : "SIGTERM");
    spdlog::warn("{}: the figures cover the time run", ended_because);
  }
  pool.stop();

  // 6. Report: one per direction; the sender's figures beside the receiver's. The client sends
  // forward (but for --transfers) and the server sends reverse.
  std::optional<report::TestReport> forward, reverse;
  if (layout.forward) {
    std::optional<control::SideResults> server_side;
    if (theirs) server_side = std::move(theirs->forward);
    std::optional<control::SideResults> client_side = std::move(mine->forward);
    forward = start.local_is_sender
                  ? direction_report(start, layout, true, std::move(client_side), std::move(server_side))
                  : direction_report(start, layout, true, std::move(server_side), std::move(client_side));
  }
  if (layout.reverse) {
    std::optional<control::SideResults> server_side;
    if (theirs) server_side = std::move(theirs->reverse);
    reverse = direction_report(start, layout, false, std::move(server_side), std::move(mine->reverse));
  }
  // Checked before the reports move into the one handed over.
  bool failed = false;
  for (const report::TestReport* direction : {forward ? &*forward : nullptr, reverse ? &*reverse : nullptr}) {
    if (!direction) continue;
    const char* sender = direction->start.local_is_sender ? "the client" : "the server";
    const char* receiver = direction->start.local_is_sender ? "the server" : "the client";
    const std::uint32_t first = direction == &*forward ? 0 : layout.forward;
    for (std::uint32_t stream : direction->mismatched_streams) {
      if (incomplete) break;
      spdlog::error("connection {}: {} sent {} bytes but {} received {}", first + stream + 1, sender,
                    direction->sender.totals[stream].bytes, receiver, direction->receiver.totals[stream].bytes);
      failed = true;
    }
    std::size_t failed_streams = stats::summarize(direction->sender.totals).failed_streams +
                                 stats::summarize(direction->receiver.totals).failed_streams;
    if (failed_streams && !incomplete) {
      spdlog::error("{} connections ended with an error", failed_streams);
      failed = true;
    }
  }
  report::TestReport live = final_report(std::move(forward), std::move(reverse));
  live.incomplete = incomplete;
  live.ended_because = ended_because;
  if (config.rr) {
    stats::LatencyHistogram all;
    for (std::uint32_t i = 0; i < connections; ++i) all.merge(streams.latencies[i]);
    live.rr = report::summarize_rr(all, config.msize, config.depth, live.local().wall_s);
  }
  if (transfers) {
    live.transfers = summarize_transfers(*streams.plan, streams.tallies.get(), connections, live.local().wall_s);
    if (live.transfers.partial_files_removed)
      spdlog::warn("removed {} partially written files under {}", live.transfers.partial_files_removed,
                   config.save_dir);
  }
  reporter.end(live);
  if (live.incomplete) co_return 1;

  if (transfers && live.transfers.completed != live.transfers.requested) {
    spdlog::error("{} of {} transfers completed; {}", live.transfers.completed, live.transfers.requested,
                  live.transfers.first_error.empty() ? "the rest did not start" : live.transfers.first_error);
    failed = true;
  }
  if (streams.file && !live.digests.matches()) {
    spdlog::error("the {} digests of what was sent and what the server received differ", live.digests.hash);
    failed = true;
  }
  co_return failed ? 1 : 0;
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
