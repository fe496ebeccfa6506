// --diagnose: the test as asked, then a few short variations of it chosen by its verdict, each a
// test of its own against the same peer, reported silently. The test's report waits for them and
// gains their table (report::Variation) and, where a variation answers, a verdict it refined. The
// variations run one after another on this thread, within --diagnose-time in all, and stop at the
// first that answers. Which variations a verdict gets (plans_for(), diagnose_plans.hpp) comes first.
#include "lifecycle/diagnose.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "lifecycle/client_lifecycle.hpp"
#include "lifecycle/diagnose_plans.hpp"
#include "util/log.hpp"
#include "util/units.hpp"

namespace testio::lifecycle {

// Which variations can confirm or refute each verdict, and how each changes the test
// (lifecycle/diagnose_plans.hpp).
namespace {

VariationPlan more_connections(const config::Config& config, Expect expect) {
  std::uint32_t doubled = std::min(config.spec.connections * 2, config.limits.max_connections);
  return {"2x connections", fmt::format("-P {}", doubled), expect,
          [doubled](config::Config& varied) { varied.spec.connections = doubled; }, "", true};
}

VariationPlan larger_buffer(const report::TestReport& report, Expect expect) {
  std::uint64_t granted = std::max(report.start.sndbuf_actual, report.start.rcvbuf_actual);
  std::uint64_t doubled = std::max<std::uint64_t>(2 * granted, 256 * 1024);
  return {"2x buffer", fmt::format("-w {}K", doubled / 1024), expect,
          [doubled](config::Config& varied) { varied.spec.window = doubled; }, ""};
}

VariationPlan truncating_receiver(const report::TestReport& report) {
  VariationPlan plan{"receive without copy", "--recv-mode trunc", Expect::gain,
            [](config::Config& varied) { varied.spec.recv_mode = spec::RecvMode::trunc; }, ""};
  if (report.start.plain_peer() && report.start.local_is_sender) plan.skipped = "the receiver is not testio's";
  return plan;
}

VariationPlan more_threads(const report::TestReport& report, bool sender) {
  unsigned now = std::max(report.start.client_threads, report.start.server_threads);
  unsigned doubled = std::max(2u, 2 * now);
  VariationPlan plan{"2x threads", fmt::format("-T {}", doubled), Expect::gain,
            [doubled](config::Config& varied) { varied.spec.threads = doubled; }, ""};
  bool remote_side = sender != report.start.local_is_sender;
  if (report.start.plain_peer() && remote_side) plan.skipped = "the peer's threads are not testio's to set";
  return plan;
}

// Each worker on a CPU of its own, round robin over the CPUs this process may use: a CPU verdict
// whose threads shared a core or migrated between cores gains from it. -A pins the server's
// workers too, unless it pins its own.
VariationPlan pinned_workers(const config::Config& config, const std::vector<std::uint32_t>& cpus) {
  std::string list = util::format_cpu_list(cpus);
  VariationPlan plan{"pinned workers", "-A " + list, Expect::gain, [cpus](config::Config& varied) { varied.spec.cpus = cpus; }, ""};
  if (!config.spec.cpus.empty()) plan.skipped = "the workers are pinned already (-A)";
  if (cpus.size() < 2) plan.skipped = "this process may run on one CPU only";
  return plan;
}

// Each receiving connection on the worker of the CPU its packets arrive on (SO_INCOMING_CPU):
// when one CPU's softirq is the limit, the receive copy moves beside it instead of competing.
VariationPlan following_receiver(const config::Config& config, const report::TestReport& report) {
  VariationPlan plan{"receiver follows its packets", "--rx-affinity follow", Expect::gain,
            [](config::Config& varied) { varied.spec.rx_follow = true; }, ""};
  if (report.start.plain_peer() && report.start.local_is_sender) plan.skipped = "the receiver is not testio's";
  if (config.spec.rx_follow) plan.skipped = "the receiver follows its packets already";
  return plan;
}

}  // namespace

std::vector<VariationPlan> plans_for(const std::string& limit, const config::Config& config, const report::TestReport& report,
                                     const std::vector<std::uint32_t>& cpus) {
  if (limit == "receiver_cpu") return {truncating_receiver(report), more_threads(report, false), pinned_workers(config, cpus)};
  if (limit == "sender_cpu")
    return {more_threads(report, true), more_connections(config, Expect::gain), pinned_workers(config, cpus)};
  if (limit == "receive_window") return {larger_buffer(report, Expect::gain), more_connections(config, Expect::gain)};
  if (limit == "send_buffer") return {larger_buffer(report, Expect::gain)};
  if (limit == "network") return {more_connections(config, Expect::same)};
  if (limit == "rx_softirq") return {following_receiver(config, report), more_connections(config, Expect::gain)};
  if (limit == "too_few_streams") return {more_connections(config, Expect::gain)};
  if (limit == "peer_receiver")
    return {truncating_receiver(report), more_connections(config, Expect::same), larger_buffer(report, Expect::same)};
  if (limit == "rate_limit") return {};
  return {more_connections(config, Expect::gain), larger_buffer(report, Expect::gain), truncating_receiver(report)};
}

// Running them.
namespace {

using Plan = VariationPlan;

// Passes everything on but the end, which it keeps until the variations have run.
class HeldEnd : public report::Reporter {
 public:
  explicit HeldEnd(report::Reporter& inner) : inner_(inner) {}
  void start(const report::StartInfo& start) override { inner_.start(start); }
  void interval(const stats::IntervalRecord& record) override { inner_.interval(record); }
  void with_interval(std::size_t workload, const report::StartInfo& start, const stats::IntervalRecord& record) override {
    inner_.with_interval(workload, start, record);
  }
  void end(const report::TestReport& report) override { held = report; }
  void error(const std::string& message) override { inner_.error(message); }

  std::optional<report::TestReport> held;

 private:
  report::Reporter& inner_;
};

// A variation's test says nothing; only its end and its error are kept.
class Silent : public report::Reporter {
 public:
  void start(const report::StartInfo&) override {}
  void interval(const stats::IntervalRecord&) override {}
  void end(const report::TestReport& report) override { ended = report; }
  void error(const std::string& message) override { failure = message; }

  std::optional<report::TestReport> ended;
  std::string failure;
};

constexpr double kGain = 1.2;       // a variation "gained" at 1.2x the test's goodput
constexpr double kSame = 1.1;       // ... and changed nothing below 1.1x
constexpr double kManyStreams = 1.5;  // twice the connections at 1.5x: each one was at its own ceiling


// What a variation's run means for the ones after it.
enum class Outcome { go_on, answered, interrupted };

const report::TestReport* in_direction(const report::TestReport& report, const std::string& direction) {
  if (report.bidir_reverse && direction == "reverse") return report.bidir_reverse.get();
  return &report;
}

double goodput_of(const report::TestReport& report) {
  const report::SideReport& side = report.receiver.present ? report.receiver : report.sender;
  return stats::summarize(report::summary_figures(side)).bits_per_second;
}

// A verdict of "network" whose twice-the-connections moved far more: each connection was at its
// own ceiling (a per-flow limit on the path, a window, a core), not the path as a whole.
void refine_to_more_streams(report::Verdict& verdict, const report::Variation& variation) {
  double ratio = variation.bps / variation.base_bps;
  verdict.others.insert(verdict.others.begin(),
                        {verdict.limit, fmt::format("refuted by --diagnose: {} moved {:.2f}x", variation.name, ratio)});
  verdict.limit = "too_few_streams";
  verdict.confidence = std::min(0.95, 0.6 + 0.2 * (ratio - 1));
  verdict.summary = fmt::format("{} ({}) moved {:.2f}x the test's goodput: each connection was at a ceiling of "
                                "its own, not the path as a whole", variation.name, variation.options, ratio);
  verdict.advice = {"Use more connections (-P); find the per-connection limit: a policer or shaper per flow, "
                    "a window capped by net.ipv4.tcp_rmem, one core per flow."};
}

// Runs `plan` for `seconds` and fills its row: answered when the verdict held or was refined,
// interrupted when a signal ended it (no variation runs after that).
Outcome run_variation(const Plan& plan, double seconds, const config::Config& config, const PeerMaker& make_peer,
                   report::Verdict& verdict, report::Variation& row) {
  config::Config varied = config;
  varied.diagnose = false;
  varied.spec.duration_s = seconds;
  varied.spec.total_bytes = 0;
  varied.spec.omit_s = 0;
  varied.spec.interval_s = 0;
  plan.apply(varied);
  util::log_info("diagnose: {} ({}) for {:.0f} s", plan.name, plan.options, seconds);
  Silent silent;
  int code = run_client(varied, silent, make_peer);
  if (!silent.ended) {
    row.note = "did not run: " + (silent.failure.empty() ? "exit " + std::to_string(code) : silent.failure);
    return Outcome::go_on;
  }
  if (silent.ended->incomplete) {
    row.note = "ended early: " + silent.ended->ended_because;
    return Outcome::interrupted;
  }
  const report::TestReport* same_way = in_direction(*silent.ended, verdict.direction);
  row.bps = goodput_of(*same_way);
  const std::vector<report::Verdict>& verdicts = silent.ended->diagnosis;
  auto own = std::find_if(verdicts.begin(), verdicts.end(), [&](const report::Verdict& each) { return each.direction == verdict.direction; });
  row.limit = own == verdicts.end() ? "unknown" : own->limit;
  double ratio = row.base_bps > 0 ? row.bps / row.base_bps : 0;
  row.held = plan.expect == Expect::gain ? ratio >= kGain : ratio < kSame;
  if (verdict.limit == "network" && plan.doubles_connections && ratio >= kManyStreams) {
    refine_to_more_streams(verdict, row);
    row.note = "the verdict is now too_few_streams";
    return Outcome::answered;
  }
  return row.held ? Outcome::answered : Outcome::go_on;
}

// Runs the variations for one direction's verdict within `budget_s`; false when a signal ended one.
bool diagnose_direction(report::Verdict& verdict, const report::TestReport& report, const config::Config& config,
                        const PeerMaker& make_peer, double budget_s, std::vector<report::Variation>& table) {
  std::vector<Plan> plans = plans_for(verdict.limit, config, report, util::process_cpus());
  if (plans.empty()) {
    table.push_back({"none", "", 0, 0, verdict.limit, true, "the test was paced on purpose: nothing to vary"});
    return true;
  }
  const double base = goodput_of(*in_direction(report, verdict.direction));
  std::size_t runnable = std::count_if(plans.begin(), plans.end(), [](const Plan& plan) { return plan.skipped.empty(); });
  double each_s = runnable ? std::max(2.0, budget_s / static_cast<double>(runnable) - 1) : 0;
  auto started = std::chrono::steady_clock::now();
  for (const Plan& plan : plans) {
    report::Variation row{plan.name, plan.options, base, 0, "", false, plan.skipped};
    if (!plan.skipped.empty()) {
      table.push_back(row);
      continue;
    }
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (spent + each_s > budget_s) {
      row.note = "no time left within --diagnose-time";
      table.push_back(row);
      continue;
    }
    Outcome outcome = run_variation(plan, each_s, config, make_peer, verdict, row);
    table.push_back(row);
    if (outcome == Outcome::interrupted) return false;
    if (outcome == Outcome::answered) break;
  }
  return true;
}

}  // namespace

int run_client_diagnosed(const config::Config& config, report::Reporter& reporter, const PeerMaker& make_peer) {
  config::Config test = config;
  test.diagnose = false;
  HeldEnd held(reporter);
  int code = run_client(test, held, make_peer);
  if (!held.held) return code;
  report::TestReport report = std::move(*held.held);
  if (code == 0 && !report.incomplete) {
    // Each direction gets its share of the time; a bidir test's two verdicts are tried one by one.
    double budget = config.diagnose_time_s / static_cast<double>(std::max<std::size_t>(1, report.diagnosis.size()));
    for (report::Verdict& verdict : report.diagnosis)
      if (!diagnose_direction(verdict, report, test, make_peer, budget, report.variations)) {
        code = 1;  // as any test a signal ended: what ran is reported, marked in its row
        break;
      }
  }
  reporter.end(report);
  return code;
}

}  // namespace testio::lifecycle
