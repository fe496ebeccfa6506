// --diagnose's plans: which variations each verdict gets, in order, and which a peer cannot run.
#include "lifecycle/diagnose_plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace testio::lifecycle {
namespace {

const std::vector<std::uint32_t> kTwoCpus{0, 1};

std::vector<std::string> options_of(const std::vector<VariationPlan>& plans) {
  std::vector<std::string> options;
  for (const VariationPlan& plan : plans) options.push_back(plan.options);
  return options;
}

const VariationPlan& named(const std::vector<VariationPlan>& plans, const std::string& name) {
  auto found = std::find_if(plans.begin(), plans.end(), [&](const VariationPlan& plan) { return plan.name == name; });
  if (found == plans.end()) throw std::runtime_error("no plan named " + name);
  return *found;
}

struct PlansTest : ::testing::Test {
  config::Config config;
  report::TestReport report;
  PlansTest() {
    config.spec.connections = 4;
    report.start.client_threads = 2;
    report.start.server_threads = 2;
  }
};

TEST_F(PlansTest, CpuVerdictsEndWithPinningOverTheProcessCpus) {
  auto receiver = plans_for("receiver_cpu", config, report, kTwoCpus);
  EXPECT_EQ(options_of(receiver), (std::vector<std::string>{"--recv-mode trunc", "-T 4", "-A 0-1"}));
  auto sender = plans_for("sender_cpu", config, report, {0, 2, 3});
  EXPECT_EQ(options_of(sender), (std::vector<std::string>{"-T 4", "-P 8", "-A 0,2-3"}));
  config::Config pinned = config;
  named(sender, "pinned workers").apply(pinned);
  EXPECT_EQ(pinned.spec.cpus, (std::vector<std::uint32_t>{0, 2, 3}));
  EXPECT_TRUE(named(sender, "pinned workers").skipped.empty());
}

TEST_F(PlansTest, PinningIsSkippedWhenPinnedAlreadyOrOnOneCpu) {
  config.spec.cpus = {1};
  EXPECT_EQ(named(plans_for("sender_cpu", config, report, kTwoCpus), "pinned workers").skipped,
            "the workers are pinned already (-A)");
  config.spec.cpus.clear();
  EXPECT_EQ(named(plans_for("receiver_cpu", config, report, {3}), "pinned workers").skipped,
            "this process may run on one CPU only");
}

TEST_F(PlansTest, SoftirqVerdictFirstMovesTheReceiverBesideItsPackets) {
  auto plans = plans_for("rx_softirq", config, report, kTwoCpus);
  EXPECT_EQ(options_of(plans), (std::vector<std::string>{"--rx-affinity follow", "-P 8"}));
  config::Config varied = config;
  plans.front().apply(varied);
  EXPECT_TRUE(varied.spec.rx_follow);
  config.spec.rx_follow = true;
  EXPECT_EQ(plans_for("rx_softirq", config, report, kTwoCpus).front().skipped, "the receiver follows its packets already");
}

TEST_F(PlansTest, APlainReceiverCannotBeVariedFromHere) {
  report.start.peer_protocol = "raw";
  report.start.local_is_sender = true;
  EXPECT_EQ(named(plans_for("rx_softirq", config, report, kTwoCpus), "receiver follows its packets").skipped,
            "the receiver is not testio's");
  EXPECT_EQ(named(plans_for("peer_receiver", config, report, kTwoCpus), "receive without copy").skipped,
            "the receiver is not testio's");
  report.start.local_is_sender = false;
  EXPECT_EQ(named(plans_for("sender_cpu", config, report, kTwoCpus), "2x threads").skipped,
            "the peer's threads are not testio's to set");
}

TEST_F(PlansTest, NetworkExpectsNoGainAndAPaceHasNothingToVary) {
  auto network = plans_for("network", config, report, kTwoCpus);
  ASSERT_EQ(network.size(), 1u);
  EXPECT_EQ(network.front().expect, Expect::same);
  EXPECT_TRUE(network.front().doubles_connections);
  EXPECT_TRUE(plans_for("rate_limit", config, report, kTwoCpus).empty());
}

TEST_F(PlansTest, BufferDoublesWhatWasGrantedAndNeverGoesBelow256K) {
  report.start.sndbuf_actual = 4 << 20;
  EXPECT_EQ(plans_for("send_buffer", config, report, kTwoCpus).front().options, "-w 8192K");
  report.start.sndbuf_actual = 16 << 10;
  EXPECT_EQ(plans_for("send_buffer", config, report, kTwoCpus).front().options, "-w 256K");
}

}  // namespace
}  // namespace testio::lifecycle
