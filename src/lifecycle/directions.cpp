#include "lifecycle/directions.hpp"

#include <algorithm>

#include <asio/experimental/awaitable_operators.hpp>

#include "lifecycle/start.hpp"

namespace testio::lifecycle {

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
