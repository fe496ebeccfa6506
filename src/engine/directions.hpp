// -R and --bidir: which of a bulk test's data connections carry which direction, one side's
// measurements kept apart per direction, and a report per direction.
//
// Forward is client to server. With --bidir the client opens the forward connections first,
// then as many reverse ones (the server sends on those); with -R every connection is reverse.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <asio/awaitable.hpp>

#include "config/config.hpp"
#include "control/protocol.hpp"
#include "engine/measurement.hpp"
#include "report/reporter.hpp"

namespace testio::engine {

struct DirectionLayout {
  std::uint32_t forward = 0;
  std::uint32_t reverse = 0;

  static DirectionLayout of(config::Direction direction, std::uint32_t connections) noexcept;
  std::uint32_t total() const noexcept { return forward + reverse; }
  std::uint32_t count(bool forward_direction) const noexcept { return forward_direction ? forward : reverse; }
  bool is_forward(std::uint32_t connection) const noexcept { return connection < forward; }
  std::uint32_t index_in_direction(std::uint32_t connection) const noexcept {
    return is_forward(connection) ? connection : connection - forward;
  }
  // The test's connections of one direction, in order.
  std::vector<std::uint32_t> connections(bool forward_direction) const;
  // The direction whose intervals are shown as they happen: forward unless the test is -R.
  bool live_forward() const noexcept { return forward > 0; }
};

// One side's measurements: a Measurement per direction that has connections. Owner: the control
// thread, as Measurement.
class DirectedMeasurement {
 public:
  DirectedMeasurement(DirectionLayout layout, double interval_s, double omit_s, double window_s);

  const DirectionLayout& layout() const noexcept { return layout_; }
  Measurement& of(bool forward_direction) noexcept { return forward_direction ? *forward_ : *reverse_; }
  Measurement& live() noexcept { return of(layout_.live_forward()); }
  stats::StreamCounters& counters(std::uint32_t connection) noexcept {
    return of(layout_.is_forward(connection)).counters(layout_.index_in_direction(connection));
  }
  void watch_socket(std::uint32_t connection, int fd) noexcept {
    of(layout_.is_forward(connection)).watch_socket(layout_.index_in_direction(connection), fd);
  }
  std::string& digest(std::uint32_t connection) noexcept {
    return of(layout_.is_forward(connection)).digest(layout_.index_in_direction(connection));
  }

  void begin(const workloads::TestClock& clock);
  // The live direction's intervals go to `reporter`; the other's are kept for the end.
  asio::awaitable<void> sample(report::Reporter& reporter);
  // Closes the last intervals. `local_sends_forward`: this side is the forward sender (the client
  // of a bulk test; the server of a --transfers test).
  control::DirectedResults finish(report::Reporter& reporter, bool local_sends_forward);

 private:
  DirectionLayout layout_;
  std::optional<Measurement> forward_, reverse_;
};

// The report of one direction: the sender's figures beside the receiver's (either absent when the
// peer's never came), and which connections' counts differ. `whole` describes every connection.
report::TestReport direction_report(const report::StartInfo& whole, const DirectionLayout& layout,
                                    bool forward_direction, std::optional<control::SideResults> sent,
                                    std::optional<control::SideResults> received);

// The report a lifecycle hands the reporter: the live direction's; for --bidir the forward one
// carrying the reverse, each knowing the other's bytes (their CPU is shared).
report::TestReport final_report(std::optional<report::TestReport> forward, std::optional<report::TestReport> reverse);

}  // namespace testio::engine
