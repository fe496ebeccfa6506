// A test's parts on one side: one TestPart per workload with its streams (TestStreams: workers,
// streams, latches) and what its start says (StartInfo, a data connection's tuning).
#include "lifecycle/parts.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <tuple>

#include <asio/any_io_executor.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>

#include "lifecycle/start.hpp"
#include "lifecycle/streams.hpp"
#include "net/flow_path.hpp"
#include "net/socket_options.hpp"
#include "util/descriptors.hpp"
#include "util/units.hpp"

namespace testio::lifecycle {

void TestParts::add(TestPart& part, std::uint32_t first) {
  part.layout = part.side->layout();
  part.threads = spec::worker_threads(part.spec.engine, part.spec.threads, part.layout.total());
  part.first = first;
}

spec::TestSpec TestParts::composed_spec() const {
  std::vector<spec::TestSpec> specs;
  for (const TestPart& part : parts_) specs.push_back(part.spec);
  return spec::composed(std::move(specs));
}

std::uint32_t TestParts::connections() const noexcept {
  std::uint32_t total = 0;
  for (const TestPart& part : parts_) total += part.connections();
  return total;
}

unsigned TestParts::threads() const noexcept {
  unsigned total = 0;
  for (const TestPart& part : parts_) total += part.threads;
  return total;
}

std::pair<TestPart*, std::uint32_t> TestParts::locate(std::uint32_t number) noexcept {
  for (TestPart& part : parts_)
    if (number >= part.first && number - part.first < part.connections()) return {&part, number - part.first};
  return {nullptr, 0};
}

namespace {

// A composed test's later workload: its intervals reach the reporter as with_interval().
class WithIntervals final : public report::Reporter {
 public:
  WithIntervals(report::Reporter& reporter, std::size_t workload, report::StartInfo start)
      : reporter_(reporter), workload_(workload), start_(std::move(start)) {}
  void start(const report::StartInfo&) override {}
  void interval(const stats::IntervalRecord& record) override { reporter_.with_interval(workload_, start_, record); }
  void end(const report::TestReport&) override {}
  void error(const std::string&) override {}

 private:
  report::Reporter& reporter_;
  std::size_t workload_;
  report::StartInfo start_;  // in the direction shown
};

}  // namespace

void TestParts::show_live(report::Reporter& reporter, workloads::Side local) {
  for (TestPart& part : parts_)
    part.streams->measurement().annotate_with(
        [side = part.side.get()](stats::IntervalRecord& record) { side->annotate(record); });
  parts_.front().streams->measurement().show_live(reporter);
  for (std::size_t k = 1; k < parts_.size(); ++k) {
    TestPart& part = parts_[k];
    const bool forward = part.layout.live_forward();
    part.live = std::make_unique<WithIntervals>(
        reporter, k + 1, direction_start(part.start, part.layout.connections(forward), part.layout.sends(local, forward)));
    part.streams->measurement().show_live(*part.live);
  }
}

void TestParts::begin(const engines::TestClock& clock) {
  for (TestPart& part : parts_) part.streams->begin(clock);
}

void TestParts::end_window() {
  for (TestPart& part : parts_)
    if (part.streams) part.streams->end_window();
}

asio::awaitable<bool> TestParts::all_done(std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (TestPart& part : parts_) {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{});
    const bool done = co_await part.streams->all_done(left);  // a named local: no co_await in a condition
    if (!done) co_return false;
  }
  co_return true;
}

asio::awaitable<void> TestParts::sample() { co_await sample_from(0); }

// Part k's sampler beside those of the parts after it: each runs until the whole is cancelled.
asio::awaitable<void> TestParts::sample_from(std::size_t k) {
  using namespace asio::experimental::awaitable_operators;
  if (k + 1 == parts_.size())
    co_await parts_[k].streams->measurement().sample();
  else
    co_await (parts_[k].streams->measurement().sample() && sample_from(k + 1));
}

std::size_t TestParts::remaining() const noexcept {
  std::size_t total = 0;
  for (const TestPart& part : parts_)
    if (part.streams) total += part.streams->remaining();
  return total;
}

void TestParts::stop() noexcept {
  for (TestPart& part : parts_)
    if (part.streams) part.streams->stop();
}

namespace {

// What a report's sender moved, both directions of --bidir.
std::uint64_t bytes_sent(const report::TestReport& report) {
  std::uint64_t bytes = stats::summarize(report::summary_figures(report.sender)).bytes;
  if (report.bidir_reverse) bytes += stats::summarize(report::summary_figures(report.bidir_reverse->sender)).bytes;
  return bytes;
}

// Each side's CPU served every workload: each report's cost per GB counts the others' bytes too.
void share_cpu(std::vector<report::TestReport>& reports) {
  std::uint64_t total = 0;
  for (const report::TestReport& report : reports) total += bytes_sent(report);
  for (report::TestReport& report : reports) {
    const std::uint64_t others = total - bytes_sent(report);
    report.composed = true;
    report.other_bytes += others;
    if (!report.bidir_reverse) continue;
    auto reverse = std::make_shared<report::TestReport>(*report.bidir_reverse);
    reverse->composed = true;
    reverse->other_bytes += others;
    report.bidir_reverse = std::move(reverse);
  }
}

}  // namespace

report::TestReport TestParts::joined(std::vector<report::TestReport> reports) {
  if (reports.size() > 1) share_cpu(reports);
  report::TestReport first = std::move(reports.front());
  first.with.assign(std::make_move_iterator(reports.begin() + 1), std::make_move_iterator(reports.end()));
  return first;
}

using asio::ip::tcp;

TestStreams::TestStreams(const asio::any_io_executor& control, const workloads::DirectionLayout& layout,
                         unsigned threads,
                         const std::vector<std::uint32_t>& cpus, const spec::TestSpec& spec, workloads::Side local)
    : measurement_(layout, spec.interval_s, spec.omit_s, spec.window_s()),
      iface_stats_(spec.iface_stats),
      rx_follow_(spec.rx_follow),
      begins_s_(spec.begins_s),
      ends_s_(spec.ends_s),
      local_(local),
      done_{std::make_shared<engines::CompletionLatch>(control, layout.forward),
            std::make_shared<engines::CompletionLatch>(control, layout.reverse)},
      pool_(threads, spec.rx_follow && cpus.empty() ? util::process_cpus() : cpus) {}

TestStreams::~TestStreams() { pool_.stop(); }

tcp::socket TestStreams::move_to_worker(std::uint32_t i, tcp::socket socket) {
  const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
  return tcp::socket(worker_for(i).context(), protocol, socket.release());
}

void TestStreams::add(workloads::TestSide& side, std::uint32_t i, std::optional<tcp::socket> socket,
                      const tcp::endpoint& server, const std::array<unsigned char, 24>& preamble,
                      std::uint64_t test_id) {
  engines::Worker* worker = &worker_for(i);
  if (socket) {
    if (i == 0 && iface_stats_)
      measurement_.live().watch_nics(
          net::choose_nics(*iface_stats_, socket->local_endpoint().data(), socket->remote_endpoint().data()));
    // The CPU that processed its handshake is its receive queue's (or RPS's): its data land there too.
    if (rx_follow_ && !layout().sends_on(local_, i))
      if (engines::Worker* on_cpu = pool_.worker_on_cpu(net::read_incoming_cpu(socket->native_handle())))
        worker = on_cpu;
    const tcp protocol = socket->local_endpoint().protocol();
    socket = tcp::socket(worker->context(), protocol, socket->release());
    measurement_.watch_socket(i, socket->native_handle());
  }
  std::shared_ptr<engines::CompletionLatch> latch = done_[layout().is_forward(i) ? 0 : 1];
  if (rx_follow_) measurement_.note_worker_cpu(i, worker->cpu());
  workloads::StreamPlace place{i, first_number_ + i, *worker, pool_.size(), measurement_.counters(i), &measurement_.digest(i),
                               [latch] { latch->count_down(); }, &server, preamble, test_id, clock_offset_ns_};
  worker->add_stream(side.make_stream(std::move(place), std::move(socket)));
}

std::string TestStreams::route_flow(workloads::TestSide& side, std::uint32_t i, asio::ip::udp::socket socket) {
  engines::Worker& worker = worker_for(i);
  const asio::ip::udp protocol = socket.local_endpoint().protocol();  // before release()
  return side.route_flow(i, asio::ip::udp::socket(worker.context(), protocol, socket.release()), worker);
}

void TestStreams::begin(const engines::TestClock& clock) {
  measurement_.begin(clock);  // every part's intervals on the test's clock
  pool_.begin(clock.within(begins_s_, ends_s_));
}

asio::awaitable<bool> TestStreams::all_done(std::chrono::steady_clock::duration limit) {
  using namespace asio::experimental::awaitable_operators;
  std::tuple<bool, bool> done = co_await (done_[0]->wait(limit) && done_[1]->wait(limit));
  co_return std::get<0>(done) && std::get<1>(done);
}

report::StartInfo start_info(const spec::TestSpec& spec, unsigned client_threads, unsigned server_threads,
                             bool from_client) {
  report::StartInfo start;
  start.spec = spec;
  start.from_client = from_client;
  start.client_threads = client_threads;
  start.server_threads = server_threads;
  return start;
}

net::TcpTuning data_tuning(const spec::TestSpec& spec, bool sending, std::uint32_t mss) {
  net::TcpTuning tuning;
  tuning.congestion = spec.congestion;
  tuning.mss = mss;
  tuning.no_delay = spec.no_delay;
  tuning.tos = static_cast<std::uint8_t>(spec.tos);
  tuning.fq_rate_bps = sending ? spec.fq_rate_bps : 0;
  return tuning;
}

std::string tune_data_connection(int fd, const spec::TestSpec& spec, bool sending, std::uint32_t mss) {
  std::string clamped;
  if (spec.window) clamped = net::clamp_warning(net::set_socket_buffers(fd, spec.window));
  net::apply_tuning(fd, data_tuning(spec, sending, mss));
  return clamped;
}

std::uint64_t descriptors_needed(const spec::TestSpec& spec, const workloads::DirectionLayout& layout,
                                 workloads::Side, unsigned threads) {
  // The control connection, a listener, the log, a sendfile source.
  constexpr std::uint64_t kOthers = 4;
  const std::uint64_t rings = spec.engine == spec::Engine::uring ? threads : 0;
  return layout.total() + rings + kOthers;
}

void check_descriptors(const spec::TestSpec& spec, const workloads::DirectionLayout& layout, workloads::Side side,
                       unsigned threads) {
  const std::string what = std::to_string(layout.total()) + (layout.total() == 1 ? " data connection" : " data connections");
  std::string shortfall = util::descriptor_shortfall(descriptors_needed(spec, layout, side, threads), what);
  if (!shortfall.empty()) throw std::runtime_error(shortfall);
}

void note_connection(report::StartInfo& start, int fd) {
  tcp::endpoint local, remote;
  socklen_t local_size = static_cast<socklen_t>(local.capacity()), remote_size = static_cast<socklen_t>(remote.capacity());
  if (::getsockname(fd, local.data(), &local_size) != 0 || ::getpeername(fd, remote.data(), &remote_size) != 0)
    throw std::runtime_error(std::string("a data connection ended as it was set up (") + std::strerror(errno) + ")");
  local.resize(local_size);
  remote.resize(remote_size);
  start.connected.push_back({local.address().to_string(), local.port(), remote.address().to_string(), remote.port()});
  if (start.connected.size() != 1) return;
  net::SocketBuffers granted = net::read_socket_buffers(fd);
  start.sndbuf_actual = granted.send_granted;
  start.rcvbuf_actual = granted.receive_granted;
  start.mss = net::read_mss(fd);
  start.no_delay = net::read_no_delay(fd);
  start.fq_rate_bps = net::read_pacing_rate_bps(fd);
  start.bind_device = net::read_bound_device(fd);
}

report::StartInfo direction_start(report::StartInfo start, const std::vector<std::uint32_t>& connections,
                                  bool local_sends) {
  std::vector<report::StreamEndpoints> connected;
  for (std::uint32_t connection : connections)
    if (connection < start.connected.size()) connected.push_back(start.connected[connection]);
  start.connected = std::move(connected);
  start.local_is_sender = local_sends;
  return start;
}

report::SideReport side_report(SideResults results) {
  report::SideReport side;
  side.present = true;
  side.totals = std::move(results.streams);
  side.intervals = std::move(results.intervals);
  side.cpu = results.cpu;
  side.wall_s = results.wall_s;
  side.congestion = std::move(results.congestion);
  side.cores = std::move(results.cores);
  side.nics_reason = std::move(results.nics_reason);
  side.paths = std::move(results.paths);
  side.incoming_cpus = std::move(results.incoming_cpus);
  side.worker_cpus = std::move(results.worker_cpus);
  side.mptcp_subflows = std::move(results.mptcp_subflows);
  side.evidence = std::move(results.evidence);
  return side;
}

}  // namespace testio::lifecycle
