#include "lifecycle/measurement.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/directions.hpp"
#include "lifecycle/start.hpp"
#include "net/mptcp.hpp"
#include "net/socket_options.hpp"
#include "net/tcp_info.hpp"

namespace testio::lifecycle {

namespace {

// The interface a connected socket's flow leaves by.
net::FlowPath path_of(int fd) {
  sockaddr_storage local{}, remote{};
  socklen_t local_size = sizeof(local), remote_size = sizeof(remote);
  if (fd < 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_size) != 0)
    return {net::kUnknownDevice, "no connection"};
  return net::flow_path(reinterpret_cast<const sockaddr*>(&local), reinterpret_cast<const sockaddr*>(&remote));
}

}  // namespace

Measurement::Measurement(std::uint32_t streams, double interval_s, double omit_s, double window_s)
    : counters_(std::make_unique<stats::StreamCounters[]>(streams)),
      fds_(streams, -1),
      digests_(streams),
      schedule_(interval_s, omit_s),
      window_s_(window_s) {}

void Measurement::begin(const engines::TestClock& clock) {
  clock_ = clock;
  cpu_at_start_ = stats::CpuTimes::now();
  cpu_ticks_at_start_ = stats::read_proc_stat();
  evidence_.begin(first_device());
  nic_last_.assign(nic_names_.size(), {});
  for (std::size_t i = 0; i < nic_names_.size(); ++i)
    nic_last_[i] = net::read_nic_counters(nic_names_[i]).value_or(net::NicCounters{});
  sampler_.emplace(counters_.get(), fds_);
}

std::vector<stats::NicSample> Measurement::sample_nics() {
  std::vector<stats::NicSample> samples;
  samples.reserve(nic_names_.size());
  for (std::size_t i = 0; i < nic_names_.size(); ++i) {
    stats::NicSample sample{nic_names_[i], {}};
    std::optional<net::NicCounters> now = net::read_nic_counters(nic_names_[i]);
    // A NIC that vanished, or whose counters went back (reset), shows nothing moved.
    if (now && now->rx_bytes >= nic_last_[i].rx_bytes && now->tx_bytes >= nic_last_[i].tx_bytes &&
        now->rx_packets >= nic_last_[i].rx_packets && now->tx_packets >= nic_last_[i].tx_packets)
      sample.moved = *now - nic_last_[i];
    if (now) nic_last_[i] = *now;
    samples.push_back(std::move(sample));
  }
  return samples;
}

asio::awaitable<void> Measurement::sample() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    double next = schedule_.next_after(last_tick_s_);
    // The boundary at the window's end is left to finish(), which closes the last interval
    // when the streams really ended.
    bool none = std::isinf(next) || (window_s_ > 0 && next >= window_s_ - 1e-6);
    if (none)
      timer.expires_at(engines::Clock::time_point::max());
    else
      timer.expires_at(clock_.start + std::chrono::duration_cast<engines::Clock::duration>(
                                          std::chrono::duration<double>(next)));
    co_await timer.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
    tick(next);
  }
}

void Measurement::tick(double end_s) {
  stats::IntervalRecord record = sampler_->take(last_tick_s_, end_s, schedule_.omitted(last_tick_s_));
  record.nics = sample_nics();
  if (annotate_) annotate_(record);
  if (live_) live_->interval(record);
  intervals_.push_back(std::move(record));
  last_tick_s_ = end_s;
}

SideResults Measurement::finish(bool sender) {
  double now_s = static_cast<double>(clock_.since_start(engines::Clock::now())) * 1e-9;
  if (now_s > last_tick_s_) tick(now_s);
  SideResults results;
  const std::size_t streams = fds_.size();
  for (std::size_t i = 0; i < streams; ++i) {
    stats::StreamFigures figures = stats::figures_from(counters_[i], 0);
    // A sender's window opens at the start, not at its first completed write.
    if (sender) figures.start_s = 0;
    if (!counters_[i].finished.load(std::memory_order_acquire)) figures.failed = true;
    results.streams.push_back(figures);
  }
  results.paths = flow_paths();
  if (!results.paths.empty())
    for (int fd : fds_) results.incoming_cpus.push_back(fd >= 0 ? net::read_incoming_cpu(fd) : -1);
  results.worker_cpus = worker_cpus_;
  results.mptcp_subflows = mptcp_subflows();
  results.evidence = evidence_.finish(stream_ends());
  results.intervals = std::move(intervals_);
  results.nics_reason = nics_reason_;
  if (!digests_.empty() && !digests_[0].empty()) results.digests = digests_;
  results.cpu = stats::CpuTimes::now() - cpu_at_start_;
  results.cores = stats::core_shares(cpu_ticks_at_start_, stats::read_proc_stat());
  results.wall_s = now_s;
  char congestion[32];
  if (streams && fds_[0] >= 0) results.congestion = net::congestion_name(fds_[0], congestion);
  return results;
}

// Each stream's TCP_INFO as it ended, for the verdict. Read before the sockets close, with the
// share of its intervals whose delivery rate was app-limited (the end's own flag only says the
// sender stopped).
std::vector<stats::StreamEnd> Measurement::stream_ends() const {
  std::vector<stats::StreamEnd> ends(fds_.size());
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    if (fds_[i] >= 0) ends[i].tcp = net::read_tcp_info(fds_[i]);
    ends[i].app_limited_share = stats::app_limited_share(intervals_, i);
  }
  return ends;
}

// The interface the first stream leaves by, whose egress qdisc the verdict reads.
std::string Measurement::first_device() const {
  for (int fd : fds_)
    if (fd >= 0) return path_of(fd).device;
  return "";
}

// Each data connection's MPTCP subflows (--mptcp, either side's), none when every one is plain TCP.
std::vector<int> Measurement::mptcp_subflows() const {
  std::vector<int> subflows;
  for (int fd : fds_) subflows.push_back(fd >= 0 ? net::mptcp_subflows(fd) : 0);
  if (std::all_of(subflows.begin(), subflows.end(), [](int count) { return count == 0; })) subflows.clear();
  return subflows;
}

// Each data connection's way out of this host, looked up once at the end (a few netlink calls
// per connection, while its socket is still open).
std::vector<net::FlowPath> Measurement::flow_paths() const {
  // Workloads whose connections come and go (--transfers) keep none open: no paths to tell.
  if (std::none_of(fds_.begin(), fds_.end(), [](int fd) { return fd >= 0; })) return {};
  std::vector<net::FlowPath> paths;
  for (int fd : fds_) paths.push_back(path_of(fd));
  return paths;
}

using workloads::DirectionLayout;
using workloads::Side;

DirectedMeasurement::DirectedMeasurement(DirectionLayout layout, double interval_s, double omit_s, double window_s)
    : layout_(layout) {
  if (layout.forward) forward_.emplace(layout.forward, interval_s, omit_s, window_s);
  if (layout.reverse) reverse_.emplace(layout.reverse, interval_s, omit_s, window_s);
}

void DirectedMeasurement::begin(const engines::TestClock& clock) {
  if (forward_) forward_->begin(clock);
  if (reverse_) reverse_->begin(clock);
}

asio::awaitable<void> DirectedMeasurement::sample() {
  using namespace asio::experimental::awaitable_operators;
  if (forward_ && reverse_)
    co_await (forward_->sample() && reverse_->sample());
  else
    co_await live().sample();
}

DirectedResults DirectedMeasurement::finish(Side local) {
  DirectedResults results;
  if (forward_) results.forward = forward_->finish(layout_.sends(local, true));
  if (reverse_) results.reverse = reverse_->finish(layout_.sends(local, false));
  return results;
}

report::TestReport direction_report(const report::StartInfo& whole, const DirectionLayout& layout,
                                    bool forward_direction, bool local_sends, std::optional<SideResults> sent,
                                    std::optional<SideResults> received) {
  report::TestReport report;
  report.start = direction_start(whole, layout.connections(forward_direction), local_sends);
  // A UDP flow loses datagrams by design: its sender and receiver differ by the loss reported.
  if (sent && received && !whole.datagrams) {
    for (std::size_t i = 0; i < sent->streams.size() && i < received->streams.size(); ++i)
      if (sent->streams[i].bytes != received->streams[i].bytes)
        report.mismatched_streams.push_back(static_cast<std::uint32_t>(i));
  }
  if (!whole.hash().empty()) {
    report.digests.hash = whole.hash();
    if (sent) report.digests.sent = sent->digests;
    if (received) report.digests.received = received->digests;
  }
  // Only the server counts the tests beside this one, in whichever side it measured.
  report.tests_beside = std::max(sent ? sent->tests_beside : 0u, received ? received->tests_beside : 0u);
  if (sent) report.sender = side_report(std::move(*sent));
  if (received) report.receiver = side_report(std::move(*received));
  return report;
}

report::TestReport final_report(std::optional<report::TestReport> forward, std::optional<report::TestReport> reverse) {
  if (!forward) return std::move(*reverse);
  if (!reverse) return std::move(*forward);
  auto bytes_sent = [](const report::TestReport& report) {
    return stats::summarize(report::summary_figures(report.sender)).bytes;
  };
  forward->other_bytes = bytes_sent(*reverse);
  reverse->other_bytes = bytes_sent(*forward);
  forward->bidir_reverse = std::make_shared<const report::TestReport>(std::move(*reverse));
  return std::move(*forward);
}

report::TestReport side_by_side(const report::StartInfo& whole, const DirectionLayout& layout, Side local,
                                DirectedResults mine, std::optional<DirectedResults> theirs) {
  std::optional<report::TestReport> forward, reverse;
  for (bool forward_direction : {true, false}) {
    if (!layout.count(forward_direction)) continue;
    std::optional<SideResults> own =
        forward_direction ? std::optional(std::move(mine.forward)) : std::move(mine.reverse);
    std::optional<SideResults> peer;
    if (theirs) peer = forward_direction ? std::optional(std::move(theirs->forward)) : std::move(theirs->reverse);
    const bool local_sends = layout.sends(local, forward_direction);
    (forward_direction ? forward : reverse) =
        local_sends ? direction_report(whole, layout, forward_direction, true, std::move(own), std::move(peer))
                    : direction_report(whole, layout, forward_direction, false, std::move(peer), std::move(own));
  }
  return final_report(std::move(forward), std::move(reverse));
}

}  // namespace testio::lifecycle
