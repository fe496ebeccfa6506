#include "engine/measurement.hpp"

#include <chrono>
#include <cmath>
#include <limits>

#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "net/tcp_info.hpp"

namespace testio::engine {

Measurement::Measurement(std::uint32_t streams, double interval_s, double omit_s, double window_s)
    : counters_(std::make_unique<stats::StreamCounters[]>(streams)),
      fds_(streams, -1),
      digests_(streams),
      schedule_(interval_s, omit_s),
      window_s_(window_s) {}

void Measurement::begin(const workloads::TestClock& clock) {
  clock_ = clock;
  cpu_at_start_ = stats::CpuTimes::now();
  sampler_.emplace(counters_.get(), fds_);
}

asio::awaitable<void> Measurement::sample(report::Reporter& reporter) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    double next = schedule_.next_after(last_tick_s_);
    // The boundary at the window's end is left to finish(), which closes the last interval
    // when the streams really ended.
    bool none = std::isinf(next) || (window_s_ > 0 && next >= window_s_ - 1e-6);
    if (none)
      timer.expires_at(workloads::Clock::time_point::max());
    else
      timer.expires_at(clock_.start + std::chrono::duration_cast<workloads::Clock::duration>(
                                          std::chrono::duration<double>(next)));
    co_await timer.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
    tick(next, reporter);
  }
}

void Measurement::tick(double end_s, report::Reporter& reporter) {
  stats::IntervalRecord record = sampler_->take(last_tick_s_, end_s, schedule_.omitted(last_tick_s_));
  reporter.interval(record);
  intervals_.push_back(std::move(record));
  last_tick_s_ = end_s;
}

control::SideResults Measurement::finish(report::Reporter& reporter, bool sender) {
  double now_s = static_cast<double>(clock_.since_start(workloads::Clock::now())) * 1e-9;
  if (now_s > last_tick_s_) tick(now_s, reporter);
  control::SideResults results;
  const std::size_t streams = fds_.size();
  for (std::size_t i = 0; i < streams; ++i) {
    stats::StreamFigures figures = stats::figures_from(counters_[i], 0);
    // A sender's window opens at the start, not at its first completed write.
    if (sender) figures.start_s = 0;
    if (!counters_[i].finished.load(std::memory_order_acquire)) figures.failed = true;
    results.streams.push_back(figures);
  }
  results.intervals = std::move(intervals_);
  if (!digests_.empty() && !digests_[0].empty()) results.digests = digests_;
  results.cpu = stats::CpuTimes::now() - cpu_at_start_;
  results.wall_s = now_s;
  char congestion[32];
  if (streams && fds_[0] >= 0) results.congestion = net::congestion_name(fds_[0], congestion);
  return results;
}

}  // namespace testio::engine
