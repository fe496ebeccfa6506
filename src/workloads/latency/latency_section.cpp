// Latency under load's phases and its report: where each load ran in the window, the figures of
// each probe kind in each phase, and the sections that tell them (the client's, the whole test's;
// the server's, what it answered).
#include "workloads/latency/latency.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "report/format.hpp"
#include "report/latency_report.hpp"
#include "report/section.hpp"
#include "report/test_report.hpp"
#include "spec/test_spec.hpp"
#include "util/units.hpp"

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

const char* name(ProbeKind kind) noexcept {
  switch (kind) {
    case ProbeKind::udp: return "udp";
    case ProbeKind::tcp: return "tcp";
    case ProbeKind::connect: return "connect";
    case ProbeKind::load: return "load";
  }
  return "?";
}

namespace {

using nlohmann::ordered_json;

constexpr std::array<ProbeKind, kProbeKinds> kAllKinds{ProbeKind::udp, ProbeKind::tcp, ProbeKind::connect,
                                                       ProbeKind::load};
constexpr std::uint64_t kConnectProbeBytes = 26;  // the preamble and a byte out, a byte back

ordered_json delay_json(const DelayFigures& delays) {
  return {{"count", delays.count},       {"p50_ms", delays.p50_ms}, {"p90_ms", delays.p90_ms},
          {"p99_ms", delays.p99_ms},     {"max_ms", delays.max_ms}, {"trimmed_mean_ms", delays.trimmed_mean_ms},
          {"rpm", delays.rpm()},         {"cdf_ms", report::cdf_json(delays.cdf_ms, delays.count > 0, 1)}};
}

stats::LatencySummary as_summary(const DelayFigures& delays) {
  stats::LatencySummary summary;
  summary.count = delays.count;
  summary.p50_ns = static_cast<std::uint64_t>(delays.p50_ms * 1e6);
  summary.p90_ns = static_cast<std::uint64_t>(delays.p90_ms * 1e6);
  summary.p99_ns = static_cast<std::uint64_t>(delays.p99_ms * 1e6);
  summary.p999_ns = static_cast<std::uint64_t>(delays.max_ms * 1e6);
  summary.max_ns = summary.p999_ns;
  summary.mean_ns = delays.trimmed_mean_ms * 1e6;
  return summary;
}

std::string dash_or(std::optional<double> value, const char* pattern) {
  return value ? report::printf_text(pattern, *value) : std::string("-");
}

class LatencySection final : public report::Section {
 public:
  LatencySection(ProbePlan plan, std::vector<Phase> phases, std::array<std::vector<ProbeRecord>, 3> records,
                 std::uint64_t dropped, stats::PeerClock clock);

  std::string key() const override { return "latency"; }
  bool whole_test() const override { return true; }
  std::string text(const report::TestReport& test, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport& test) const override;
  void metrics(report::MetricSink& sink) const override;

 private:
  struct PhaseFigures {
    std::array<KindFigures, kProbeKinds> kinds;  // by ProbeKind
    double goodput_bps = 0;
    double probe_bps = 0;                        // what the probes carried, both ways
  };
  PhaseFigures figures(const report::TestReport& test, const Phase& phase) const;
  bool shown(ProbeKind kind) const noexcept;

  ProbePlan plan_;
  std::vector<Phase> phases_;
  std::array<std::vector<ProbeRecord>, 3> records_;  // udp, tcp, connect
  std::uint64_t dropped_;
  stats::PeerClock clock_;
  std::array<std::optional<double>, kProbeKinds> idle_p50_ms_;  // by kind; none without an idle phase
};

class ServerLatencySection final : public report::Section {
 public:
  explicit ServerLatencySection(ServerProbes probes) : probes_(std::move(probes)) {}
  std::string key() const override { return "latency"; }
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;

 private:
  ServerProbes probes_;
};

LatencySection::LatencySection(ProbePlan plan, std::vector<Phase> phases, std::array<std::vector<ProbeRecord>, 3> records,
                               std::uint64_t dropped, stats::PeerClock clock)
    : plan_(plan), phases_(std::move(phases)), records_(std::move(records)), dropped_(dropped), clock_(clock) {
  // The baseline the load adds to: the first idle phase's p50 round trip of each kind (an idle
  // phase has no load connections, so the load's own RTT has none).
  const auto idle = std::find_if(phases_.begin(), phases_.end(), [](const Phase& phase) { return phase.name == "idle"; });
  if (idle == phases_.end()) return;
  for (ProbeKind kind : {ProbeKind::udp, ProbeKind::tcp, ProbeKind::connect}) {
    const auto k = static_cast<std::size_t>(kind);
    if (!plan_.kinds[k]) continue;
    const KindFigures figures = kind_figures(kind, records_[k], *idle);
    if (figures.round_trip.count) idle_p50_ms_[k] = figures.round_trip.p50_ms;
  }
}

bool LatencySection::shown(ProbeKind kind) const noexcept {
  return kind == ProbeKind::load || plan_.kinds[static_cast<std::size_t>(kind)];
}

LatencySection::PhaseFigures LatencySection::figures(const report::TestReport& test, const Phase& phase) const {
  PhaseFigures figures;
  for (ProbeKind kind : {ProbeKind::udp, ProbeKind::tcp, ProbeKind::connect})
    if (shown(kind))
      figures.kinds[static_cast<std::size_t>(kind)] =
          kind_figures(kind, records_[static_cast<std::size_t>(kind)], phase);
  figures.kinds[static_cast<std::size_t>(ProbeKind::load)] = load_rtt_figures(test, phase);
  figures.goodput_bps = phase_goodput_bps(test, phase);
  const KindFigures& udp = figures.kinds[0];
  const KindFigures& tcp = figures.kinds[1];
  const KindFigures& connect = figures.kinds[2];
  const double bytes = static_cast<double>((udp.sent + udp.round_trip.count) * plan_.size +
                                           2 * tcp.round_trip.count * plan_.size + connect.sent * kConnectProbeBytes);
  figures.probe_bps = phase.seconds() > 0 ? bytes * 8 / phase.seconds() : 0;
  return figures;
}

std::string LatencySection::text(const report::TestReport& test, char unit) const {
  std::string lines = "latency under load: ";
  const char* paced = plan_.kinds[0] && plan_.kinds[1] ? "udp and tcp" : plan_.kinds[0] ? "udp" : "tcp";
  if (plan_.kinds[0] || plan_.kinds[1]) lines += report::printf_text("%s probes every %g ms", paced, plan_.interval_ms);
  if (plan_.kinds[2]) lines += report::printf_text("%sconnect probes every %g ms", plan_.kinds[0] || plan_.kinds[1] ? ", " : "",
                                      plan_.connect_interval_ms);
  if (plan_.kinds[0] && clock_.known())
    lines += report::printf_text("; one-way delays on the %s clock (within %.3f ms)", clock_.name(),
                    static_cast<double>(clock_.error_bound_ns) / 1e6);
  lines += "\n";
  lines += report::printf_text("%-9s %11s %14s %-8s %7s %6s %8s %8s %8s %8s %8s %9s\n", "phase", "seconds", "goodput", "kind",
                  "count", "lost", "p50 ms", "p90 ms", "p99 ms", "max ms", "added", "RPM");
  double probe_bytes = 0, load_bytes = 0;
  for (const Phase& phase : phases_) {
    const PhaseFigures all = figures(test, phase);
    probe_bytes += all.probe_bps * phase.seconds() / 8;
    load_bytes += all.goodput_bps * phase.seconds() / 8;
    bool first = true;
    for (ProbeKind kind : kAllKinds) {
      const KindFigures& kind_figures = all.kinds[static_cast<std::size_t>(kind)];
      if (!shown(kind) || (kind == ProbeKind::load && kind_figures.round_trip.count == 0)) continue;
      const DelayFigures& rtt = kind_figures.round_trip;
      const std::optional<double> idle = idle_p50_ms_[static_cast<std::size_t>(kind)];
      const std::optional<double> added =
          idle && rtt.count && phase.name != "idle" ? std::optional<double>(rtt.p50_ms - *idle) : std::nullopt;
      lines += report::printf_text("%-9s %11s %14s %-8s %7llu %6llu %8.3f %8.3f %8.3f %8.3f %8s %9.0f\n",
                      first ? phase.name.c_str() : "",
                      first ? report::printf_text("%.1f-%.1f", phase.begins_s, phase.ends_s).c_str() : "",
                      first ? (phase.loads.empty() ? "-" : util::format_rate(all.goodput_bps, unit).c_str()) : "",
                      name(kind), static_cast<unsigned long long>(rtt.count),
                      static_cast<unsigned long long>(kind_figures.lost), rtt.p50_ms, rtt.p90_ms, rtt.p99_ms,
                      rtt.max_ms, dash_or(added, "%+.3f").c_str(), rtt.rpm());
      if (kind == ProbeKind::udp && kind_figures.up.count)
        lines += report::printf_text("%-45s one-way p50 up %.3f ms, down %.3f ms\n", "", kind_figures.up.p50_ms,
                        kind_figures.down.p50_ms);
      first = false;
    }
  }
  lines += report::printf_text("probes: %.1f kB in all", probe_bytes / 1e3);
  if (load_bytes > 0) lines += report::printf_text(", %.4f%% of the load's bytes", 100 * probe_bytes / load_bytes);
  if (load_bytes > 0 && probe_bytes > 0.01 * load_bytes)
    lines += " (more than 1%: fewer --latency-kinds or a longer --latency-interval cost less)";
  if (dropped_) lines += report::printf_text("; %llu probes beyond the log's room are left out", static_cast<unsigned long long>(dropped_));
  return lines + "\n";
}

nlohmann::ordered_json LatencySection::json(const report::TestReport& test) const {
  ordered_json phases = ordered_json::array();
  for (const Phase& phase : phases_) {
    const PhaseFigures all = figures(test, phase);
    ordered_json entry = {{"name", phase.name},
                          {"begins_s", phase.begins_s},
                          {"ends_s", phase.ends_s},
                          {"goodput_bps", all.goodput_bps},
                          {"probe_bps", all.probe_bps},
                          {"probe_share", all.goodput_bps > 0 ? all.probe_bps / all.goodput_bps : 0.0}};
    for (ProbeKind kind : kAllKinds) {
      const KindFigures& figures = all.kinds[static_cast<std::size_t>(kind)];
      if (!shown(kind) || (kind == ProbeKind::load && figures.round_trip.count == 0)) continue;
      ordered_json kind_json = delay_json(figures.round_trip);
      kind_json["sent"] = figures.sent;
      kind_json["lost"] = figures.lost;
      const std::optional<double> idle = idle_p50_ms_[static_cast<std::size_t>(kind)];
      kind_json["idle_p50_ms"] = idle ? ordered_json(*idle) : ordered_json(nullptr);
      const bool loaded = idle && figures.round_trip.count && phase.name != "idle";
      kind_json["added_ms"] = loaded ? ordered_json(figures.round_trip.p50_ms - *idle) : ordered_json(nullptr);
      if (kind == ProbeKind::udp) {
        kind_json["interval_ms"] = plan_.interval_ms;
        kind_json["up"] = delay_json(figures.up);
        kind_json["down"] = delay_json(figures.down);
        kind_json["clock"] = clock_.name();
        kind_json["clock_error_ms"] = static_cast<double>(clock_.error_bound_ns) / 1e6;
      }
      if (kind == ProbeKind::tcp) kind_json["interval_ms"] = plan_.interval_ms;
      if (kind == ProbeKind::connect) {
        kind_json["interval_ms"] = plan_.connect_interval_ms;
        kind_json["handshake"] = delay_json(figures.up);
      }
      entry[name(kind)] = std::move(kind_json);
    }
    phases.push_back(std::move(entry));
  }
  return phases;
}

void LatencySection::metrics(report::MetricSink& sink) const {
  for (const Phase& phase : phases_)
    for (ProbeKind kind : {ProbeKind::udp, ProbeKind::tcp, ProbeKind::connect}) {
      if (!shown(kind)) continue;
      const KindFigures figures = kind_figures(kind, records_[static_cast<std::size_t>(kind)], phase);
      const report::MetricLabels labels{{"phase", phase.name}, {"kind", name(kind)},
                                        {"begins", report::printf_text("%g", phase.begins_s)}};
      sink.latency("testio_latency_round_trip_seconds",
                   "Latency probes' round trips in each phase of the test, by probe kind",
                   as_summary(figures.round_trip), labels);
    }
}

std::string ServerLatencySection::text(const report::TestReport&, char) const {
  std::string line = "latency probes answered:";
  if (probes_.plan.kinds[0]) {
    line += report::printf_text(" udp %llu", static_cast<unsigned long long>(probes_.udp_answered));
    if (probes_.udp_up_ns.count())
      line += report::printf_text(" (one-way up p50 %.3f ms, p99 %.3f ms)", static_cast<double>(probes_.udp_up_ns.percentile(50)) / 1e6,
                     static_cast<double>(probes_.udp_up_ns.percentile(99)) / 1e6);
  }
  if (probes_.plan.kinds[1]) line += report::printf_text(", tcp %llu", static_cast<unsigned long long>(probes_.tcp_messages));
  if (probes_.plan.kinds[2]) line += report::printf_text(", connect %llu", static_cast<unsigned long long>(probes_.connects));
  return line + "\n";
}

nlohmann::ordered_json ServerLatencySection::json(const report::TestReport&) const {
  ordered_json answered = ordered_json::object();
  if (probes_.plan.kinds[0]) {
    const stats::LatencySummary up = stats::summarize(probes_.udp_up_ns);
    answered["udp"] = {{"count", probes_.udp_answered},
                       {"up_p50_ms", static_cast<double>(up.p50_ns) / 1e6},
                       {"up_p99_ms", static_cast<double>(up.p99_ns) / 1e6}};
  }
  if (probes_.plan.kinds[1]) answered["tcp"] = {{"count", probes_.tcp_messages}};
  if (probes_.plan.kinds[2]) answered["connect"] = {{"count", probes_.connects}};
  return {{"answered", std::move(answered)}};
}

void ServerLatencySection::metrics(report::MetricSink& sink) const {
  sink.gauge("testio_latency_probes_answered", "Latency probes this server answered, by kind",
             {{{{"kind", "udp"}}, static_cast<double>(probes_.udp_answered)},
              {{{"kind", "tcp"}}, static_cast<double>(probes_.tcp_messages)},
              {{{"kind", "connect"}}, static_cast<double>(probes_.connects)}});
  if (probes_.udp_up_ns.count())
    sink.latency("testio_latency_udp_up_seconds", "The one-way delay of UDP latency probes to this server",
                 stats::summarize(probes_.udp_up_ns));
}

}  // namespace

std::shared_ptr<const report::Section> make_client_section(ProbePlan plan, std::vector<Phase> phases,
                                                           std::array<std::vector<ProbeRecord>, 3> records,
                                                           std::uint64_t dropped, stats::PeerClock clock) {
  return std::make_shared<const LatencySection>(plan, std::move(phases), std::move(records), dropped, clock);
}

std::shared_ptr<const report::Section> make_server_section(ServerProbes probes) {
  return std::make_shared<const ServerLatencySection>(std::move(probes));
}

}  // namespace testio::workloads::latency
