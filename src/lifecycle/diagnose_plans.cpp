// Which variations can confirm or refute each verdict, and how each changes the test.
#include "lifecycle/diagnose_plans.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "util/units.hpp"

namespace testio::lifecycle {

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

}  // namespace testio::lifecycle
