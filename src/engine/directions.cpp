#include "engine/directions.hpp"

#include <algorithm>

#include <asio/experimental/awaitable_operators.hpp>

#include "engine/test_start.hpp"
#include "report/null_reporter.hpp"

namespace testio::engine {

DirectionLayout DirectionLayout::of(config::Direction direction, std::uint32_t connections) noexcept {
  switch (direction) {
    case config::Direction::forward: return {connections, 0};
    case config::Direction::reverse: return {0, connections};
    case config::Direction::bidir: return {connections, connections};
  }
  return {connections, 0};
}

std::vector<std::uint32_t> DirectionLayout::connections(bool forward_direction) const {
  std::vector<std::uint32_t> list;
  const std::uint32_t first = forward_direction ? 0 : forward;
  for (std::uint32_t i = 0; i < count(forward_direction); ++i) list.push_back(first + i);
  return list;
}

DirectedMeasurement::DirectedMeasurement(DirectionLayout layout, double interval_s, double omit_s, double window_s)
    : layout_(layout) {
  if (layout.forward) forward_.emplace(layout.forward, interval_s, omit_s, window_s);
  if (layout.reverse) reverse_.emplace(layout.reverse, interval_s, omit_s, window_s);
}

void DirectedMeasurement::begin(const workloads::TestClock& clock) {
  if (forward_) forward_->begin(clock);
  if (reverse_) reverse_->begin(clock);
}

asio::awaitable<void> DirectedMeasurement::sample(report::Reporter& reporter) {
  using namespace asio::experimental::awaitable_operators;
  report::NullReporter quiet;
  if (forward_ && reverse_)
    co_await (forward_->sample(reporter) && reverse_->sample(quiet));
  else
    co_await live().sample(reporter);
}

control::DirectedResults DirectedMeasurement::finish(report::Reporter& reporter, bool local_sends_forward) {
  report::NullReporter quiet;
  control::DirectedResults results;
  const bool live_forward = layout_.live_forward();
  if (forward_) results.forward = forward_->finish(live_forward ? reporter : quiet, local_sends_forward);
  if (reverse_) results.reverse = reverse_->finish(live_forward ? quiet : reporter, !local_sends_forward);
  return results;
}

report::TestReport direction_report(const report::StartInfo& whole, const DirectionLayout& layout,
                                    bool forward_direction, std::optional<control::SideResults> sent,
                                    std::optional<control::SideResults> received) {
  const bool local_sends = forward_direction ? whole.local_is_sender : !whole.local_is_sender;
  report::TestReport report;
  report.start = direction_start(whole, layout.connections(forward_direction), local_sends);
  report.start.bidir = layout.forward && layout.reverse;
  if (sent && received) {
    for (std::size_t i = 0; i < sent->streams.size() && i < received->streams.size(); ++i)
      if (sent->streams[i].bytes != received->streams[i].bytes)
        report.mismatched_streams.push_back(static_cast<std::uint32_t>(i));
  }
  if (!whole.hash.empty()) {
    report.digests.hash = whole.hash;
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
  forward->other_direction_bytes = bytes_sent(*reverse);
  reverse->other_direction_bytes = bytes_sent(*forward);
  forward->bidir_reverse = std::make_shared<const report::TestReport>(std::move(*reverse));
  return std::move(*forward);
}

}  // namespace testio::engine
