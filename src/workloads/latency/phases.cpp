#include "workloads/latency/phases.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace testio::workloads::latency {
namespace {

constexpr double kSameTime = 1e-6;
constexpr std::string_view kLatency = "latency";

double ends_of(const spec::TestSpec& part, double window_s) { return part.ends_s > 0 ? part.ends_s : window_s; }

std::string phase_name(const std::vector<spec::TestSpec>& parts, const std::vector<std::size_t>& loads) {
  bool up = false, down = false;
  for (std::size_t k : loads) {
    up = up || parts[k].direction != spec::Direction::reverse;
    down = down || parts[k].direction != spec::Direction::forward;
  }
  if (up && down) return "bidir";
  if (up) return "upload";
  return down ? "download" : "idle";
}

const report::TestReport& part_report(const report::TestReport& test, std::size_t k) {
  return k == 0 ? test : test.with[k - 1];
}

// The nearest-rank percentile of sorted values, in ms.
double percentile_ms(const std::vector<std::uint64_t>& sorted, double percent) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]) / 1e6;
}

bool within(const Phase& phase, double at_s) { return at_s >= phase.begins_s - kSameTime && at_s < phase.ends_s - kSameTime; }

// A direction's report of a load (each side's sending streams, the reverse of --bidir apart).
template <typename Visit>
void each_direction(const report::TestReport& report, Visit&& visit) {
  visit(report);
  if (report.bidir_reverse) visit(*report.bidir_reverse);
}

}  // namespace

std::vector<Phase> phases_of(const spec::TestSpec& test) {
  const std::vector<spec::TestSpec> parts = spec::workloads_of(test);
  const double window = test.window_s();
  std::vector<double> bounds{0, window};
  for (const spec::TestSpec& part : parts) {
    if (part.workload == kLatency) continue;
    bounds.push_back(part.begins_s);
    bounds.push_back(ends_of(part, window));
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end(), [](double a, double b) { return b - a < kSameTime; }),
               bounds.end());
  std::vector<Phase> phases;
  for (std::size_t i = 0; i + 1 < bounds.size() && bounds[i] < window; ++i) {
    Phase phase{"", bounds[i], std::min(bounds[i + 1], window), {}};
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (parts[k].workload != kLatency && parts[k].begins_s <= phase.begins_s + kSameTime &&
          ends_of(parts[k], window) >= phase.ends_s - kSameTime)
        phase.loads.push_back(k);
    phase.name = phase_name(parts, phase.loads);
    phases.push_back(std::move(phase));
  }
  return phases;
}

DelayFigures delay_figures(std::vector<std::uint64_t>& delays_ns) {
  DelayFigures figures;
  figures.count = delays_ns.size();
  if (delays_ns.empty()) return figures;
  std::sort(delays_ns.begin(), delays_ns.end());
  figures.p50_ms = percentile_ms(delays_ns, 50);
  figures.p90_ms = percentile_ms(delays_ns, 90);
  figures.p99_ms = percentile_ms(delays_ns, 99);
  figures.max_ms = static_cast<double>(delays_ns.back()) / 1e6;
  for (std::size_t i = 0; i < stats::kCdfPercents.size(); ++i)
    figures.cdf_ms[i] = i == 0 ? static_cast<double>(delays_ns.front()) / 1e6 : percentile_ms(delays_ns, stats::kCdfPercents[i]);
  // The draft's 95th-percentile trimmed mean: the highest 5% left out.
  const std::size_t kept = std::max<std::size_t>(1, delays_ns.size() - delays_ns.size() / 20);
  const double sum = std::accumulate(delays_ns.begin(), delays_ns.begin() + static_cast<std::ptrdiff_t>(kept), 0.0,
                                     [](double total, std::uint64_t value) { return total + static_cast<double>(value); });
  figures.trimmed_mean_ms = sum / static_cast<double>(kept) / 1e6;
  return figures;
}

KindFigures kind_figures(ProbeKind kind, const std::vector<ProbeRecord>& records, const Phase& phase) {
  KindFigures figures;
  std::vector<std::uint64_t> round_trips, ups, downs;
  for (const ProbeRecord& record : records) {
    if (!within(phase, static_cast<double>(record.sent_ns) / 1e9)) continue;
    ++figures.sent;
    if (!record.answered) {
      ++figures.lost;
      continue;
    }
    round_trips.push_back(record.rtt_ns);
    if (kind == ProbeKind::udp || kind == ProbeKind::connect) ups.push_back(record.up_ns);
    if (kind == ProbeKind::udp) downs.push_back(record.down_ns);
  }
  figures.round_trip = delay_figures(round_trips);
  figures.up = delay_figures(ups);
  figures.down = delay_figures(downs);
  return figures;
}

KindFigures load_rtt_figures(const report::TestReport& test, const Phase& phase) {
  std::vector<std::uint64_t> round_trips;
  for (std::size_t k : phase.loads)
    each_direction(part_report(test, k), [&](const report::TestReport& direction) {
      for (const stats::IntervalRecord& interval : direction.sender.intervals) {
        if (!within(phase, (interval.start_s + interval.end_s) / 2)) continue;
        for (const stats::StreamSample& stream : interval.streams)
          if (stream.tcp.rtt_us > 0) round_trips.push_back(std::uint64_t{stream.tcp.rtt_us} * 1000);
      }
    });
  KindFigures figures;
  figures.sent = round_trips.size();
  figures.round_trip = delay_figures(round_trips);
  return figures;
}

double phase_goodput_bps(const report::TestReport& test, const Phase& phase) {
  double bytes = 0;
  for (std::size_t k : phase.loads)
    each_direction(part_report(test, k), [&](const report::TestReport& direction) {
      const report::SideReport& received = direction.receiver;
      if (!received.intervals.empty()) {
        for (const stats::IntervalRecord& interval : received.intervals) {
          const double overlap = std::min(interval.end_s, phase.ends_s) - std::max(interval.start_s, phase.begins_s);
          if (overlap > 0 && interval.seconds() > 0)
            bytes += static_cast<double>(interval.bytes()) * overlap / interval.seconds();
        }
        return;
      }
      // Without intervals (-i 0): its totals, spread over the time it ran.
      const spec::TestSpec& spec = direction.start.spec;
      const double span = (spec.ends_s > 0 ? spec.ends_s : spec.window_s()) - spec.begins_s;
      std::uint64_t total = 0;
      for (const stats::StreamFigures& stream : received.totals) total += stream.bytes;
      if (span > 0) bytes += static_cast<double>(total) * phase.seconds() / span;
    });
  return phase.seconds() > 0 ? bytes * 8 / phase.seconds() : 0;
}

}  // namespace testio::workloads::latency
