// One side's measurements of a test: per-stream counters written by the workers, interval
// records taken on the control thread at absolute deadlines, and the CPU the process used.
// Owner: the control thread; the workers only write the counters.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"
#include "lifecycle/exchange.hpp"
#include "net/flow_path.hpp"
#include "report/reporter.hpp"
#include "stats/core_spread.hpp"
#include "stats/counters.hpp"
#include "stats/sampler.hpp"
#include "stats/side_evidence.hpp"
#include "engines/stream_task.hpp"

namespace testio::lifecycle {

class Measurement {
 public:
  // `window_s` is omit + duration for a timed test, 0 for a byte-count test: the last interval
  // then runs to the real end instead of a tick a few microseconds before it.
  Measurement(std::uint32_t streams, double interval_s, double omit_s, double window_s);

  stats::StreamCounters& counters(std::uint32_t stream) noexcept { return counters_[stream]; }
  // The socket whose TCP_INFO each interval reads; it must stay open until finish().
  void watch_socket(std::uint32_t stream, int fd) noexcept { fds_[stream] = fd; }
  // --rx-affinity follow: the CPU stream `stream`'s worker is pinned to (-1: none), for the report.
  void note_worker_cpu(std::uint32_t stream, int cpu) {
    worker_cpus_.resize(fds_.size(), -1);
    worker_cpus_[stream] = cpu;
  }
  // -F: where stream `stream` leaves its digest; written by its worker before it finishes.
  std::string& digest(std::uint32_t stream) noexcept { return digests_[stream]; }
  // --iface-stats: the NICs whose kernel counters each interval reads, and why. Call before begin().
  void watch_nics(net::ChosenNics chosen) {
    nic_names_ = std::move(chosen.names);
    nics_reason_ = std::move(chosen.reason);
  }
  const std::vector<std::string>& watched_nics() const noexcept { return nic_names_; }

  // Each interval also goes to `reporter` as it closes (the direction shown live); without this
  // the intervals are only kept for the end.
  void show_intervals_to(report::Reporter& reporter) noexcept { live_ = &reporter; }
  // Each interval as it closes also gets the workload's own figures (TestSide::annotate).
  void annotate_with(std::function<void(stats::IntervalRecord&)> annotate) { annotate_ = std::move(annotate); }
  // Call as the test starts (with the clock handed to the workers).
  void begin(const engines::TestClock& clock);
  // Closes an interval at each boundary; runs until cancelled (await it with || beside the event
  // that ends the test).
  net::Awaitable<void> sample();
  // Closes the last interval now and gathers this side's figures. Call once every stream ended.
  SideResults finish(bool sender);

 private:
  void tick(double end_s);
  std::vector<stats::NicSample> sample_nics();
  std::vector<net::FlowPath> flow_paths() const;
  std::vector<int> mptcp_subflows() const;
  std::string first_device() const;
  std::vector<stats::StreamEnd> stream_ends() const;

  std::unique_ptr<stats::StreamCounters[]> counters_;
  std::vector<int> fds_;
  std::vector<std::string> digests_;
  std::vector<int> worker_cpus_;  // empty unless --rx-affinity follow
  stats::IntervalSchedule schedule_;
  double window_s_;
  std::optional<stats::Sampler> sampler_;
  engines::TestClock clock_;
  stats::CpuTimes cpu_at_start_;
  double last_tick_s_ = 0;
  std::vector<stats::IntervalRecord> intervals_;
  std::vector<std::string> nic_names_;
  std::string nics_reason_;
  std::vector<net::NicCounters> nic_last_;        // each watched NIC's counters at the last tick
  std::vector<stats::CpuTicks> cpu_ticks_at_start_;  // /proc/stat, for the per-CPU shares
  stats::EvidenceWatch evidence_;                     // threads, TcpExt and qdisc, for the verdict
  report::Reporter* live_ = nullptr;
  std::function<void(stats::IntervalRecord&)> annotate_;
};

}  // namespace testio::lifecycle
