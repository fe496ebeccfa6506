// One side's measurements kept apart per direction (-R, --bidir), and the report of each
// direction with this side's figures beside the peer's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "net/asio_fwd.hpp"
#include "lifecycle/exchange.hpp"
#include "report/reporter.hpp"
#include "lifecycle/measurement.hpp"
#include "workloads/layout.hpp"

namespace testio::lifecycle {

// A Measurement per direction that has connections. Owner: the control thread, as Measurement.
class DirectedMeasurement {
 public:
  DirectedMeasurement(workloads::DirectionLayout layout, double interval_s, double omit_s, double window_s);

  const workloads::DirectionLayout& layout() const noexcept { return layout_; }
  Measurement& of(bool forward_direction) noexcept { return forward_direction ? *forward_ : *reverse_; }
  Measurement& live() noexcept { return of(layout_.live_forward()); }
  stats::StreamCounters& counters(std::uint32_t connection) noexcept {
    return of(layout_.is_forward(connection)).counters(layout_.index_in_direction(connection));
  }
  void watch_socket(std::uint32_t connection, int fd) noexcept {
    of(layout_.is_forward(connection)).watch_socket(layout_.index_in_direction(connection), fd);
  }
  void note_worker_cpu(std::uint32_t connection, int cpu) {
    of(layout_.is_forward(connection)).note_worker_cpu(layout_.index_in_direction(connection), cpu);
  }
  std::string& digest(std::uint32_t connection) noexcept {
    return of(layout_.is_forward(connection)).digest(layout_.index_in_direction(connection));
  }

  // The live direction's intervals go to `reporter` as they close; the other's are kept for the end.
  void show_live(report::Reporter& reporter) noexcept { live().show_intervals_to(reporter); }
  void annotate_with(const std::function<void(stats::IntervalRecord&)>& annotate) {
    if (forward_) forward_->annotate_with(annotate);
    if (reverse_) reverse_->annotate_with(annotate);
  }
  void begin(const engines::TestClock& clock);
  net::Awaitable<void> sample();
  // Closes the last intervals; `local` says which side this is, and so who sent each direction.
  DirectedResults finish(workloads::Side local);

 private:
  workloads::DirectionLayout layout_;
  std::optional<Measurement> forward_, reverse_;
};

// The report of one direction: the sender's figures beside the receiver's (either absent when the
// peer's never came), and which connections' counts differ. `whole` describes every connection.
report::TestReport direction_report(const report::StartInfo& whole, const workloads::DirectionLayout& layout,
                                    bool forward_direction, bool local_sends, std::optional<SideResults> sent,
                                    std::optional<SideResults> received);

// The report a lifecycle hands the reporter: the live direction's; for --bidir the forward one
// carrying the reverse, each knowing the other's bytes (their CPU is shared).
report::TestReport final_report(std::optional<report::TestReport> forward, std::optional<report::TestReport> reverse);

// Both directions' reports from this side's figures (`mine`) and the peer's (`theirs`, absent when
// they never came), joined as final_report() does.
report::TestReport side_by_side(const report::StartInfo& whole, const workloads::DirectionLayout& layout,
                                workloads::Side local, DirectedResults mine,
                                std::optional<DirectedResults> theirs);

}  // namespace testio::lifecycle
