// Latency under load's part of a report. The client's is the whole test's (Section::whole_test):
// per phase and per probe kind, count, loss, p50, p90, p99 and max, the idle baseline and what the
// load added, RPM, the phase's goodput and what the probes cost; in text, at JSON's end.latency
// (one entry per phase) and as metrics. The server's tells what it answered and, for UDP, the
// one-way delay up. Immutable once made; the control thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "report/section.hpp"
#include "stats/histogram.hpp"
#include "stats/peer_clock.hpp"
#include "workloads/latency/phases.hpp"
#include "workloads/latency/probe_log.hpp"

namespace testio::workloads::latency {

struct ProbePlan {
  double interval_ms = 10;           // udp and tcp probes
  double connect_interval_ms = 100;  // connect probes
  std::uint64_t size = 72;           // bytes per udp and tcp probe
  std::array<bool, 3> kinds{true, true, true};  // udp, tcp, connect
};

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

// What the server answered. Plain figures, one per kind.
struct ServerProbes {
  ProbePlan plan;
  std::uint64_t udp_answered = 0;
  stats::LatencyHistogram udp_up_ns;
  std::uint64_t tcp_messages = 0;
  std::uint64_t connects = 0;
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

}  // namespace testio::workloads::latency
