// Latency under load's phases and their figures. A phase is a stretch of the window in which the
// same load runs (none: idle; the server sending: download; the client: upload; both: bidir),
// found from where each of the test's other workloads runs (begins_s, ends_s). Each probe kind's
// round trips in a phase give its percentiles, the draft's trimmed mean and RPM. Pure functions
// and plain values; the control thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/test_report.hpp"
#include "spec/test_spec.hpp"
#include "stats/histogram.hpp"
#include "workloads/latency/probe_log.hpp"

namespace testio::workloads::latency {

struct Phase {
  std::string name;                 // idle, download, upload, bidir
  double begins_s = 0, ends_s = 0;  // from the window's start
  std::vector<std::size_t> loads;   // the test's workloads (0: the first) that run through it
  double seconds() const noexcept { return ends_s - begins_s; }
};

// The phases of `test` (a composed test's first spec; the latency workload is among its parts).
std::vector<Phase> phases_of(const spec::TestSpec& test);

// One set of delays (ns), as the report tells them.
struct DelayFigures {
  std::uint64_t count = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  double trimmed_mean_ms = 0;  // the mean of the lowest 95% (draft-ietf-ippm-responsiveness)
  std::array<double, stats::kCdfPercents.size()> cdf_ms{};  // at each of stats::kCdfPercents
  // Round trips per minute: 60,000 over the trimmed mean in ms; 0 without samples.
  double rpm() const noexcept { return trimmed_mean_ms > 0 ? 60'000.0 / trimmed_mean_ms : 0; }
};
// Sorts `delays_ns` in place.
DelayFigures delay_figures(std::vector<std::uint64_t>& delays_ns);

// One probe kind in one phase.
struct KindFigures {
  std::uint64_t sent = 0;          // probes due (udp: sent or due while the flow could not open)
  std::uint64_t lost = 0;
  DelayFigures round_trip;
  DelayFigures up, down;           // udp: one-way; connect: `up` is the handshake alone
};

// The probes of `records` sent within `phase`.
KindFigures kind_figures(ProbeKind kind, const std::vector<ProbeRecord>& records, const Phase& phase);
// The load connections' RTT from TCP_INFO: each sending stream's at each interval that ends within
// `phase`, of the workloads running through it (`test`: the first workload's report).
KindFigures load_rtt_figures(const report::TestReport& test, const Phase& phase);
// What the workloads running through `phase` received in it, bits per second: each one's
// intervals' bytes (shared out by the time they overlap it), or its totals over its span.
double phase_goodput_bps(const report::TestReport& test, const Phase& phase);

}  // namespace testio::workloads::latency
