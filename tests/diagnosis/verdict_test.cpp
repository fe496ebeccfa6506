// The verdict from made-up figures: each limit from the evidence that names it, the order in
// which one limit explains another, and what is said when evidence is missing.
#include "diagnosis/verdict.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace testio::diagnosis {
namespace {

constexpr double kWall = 10;

// One side of a 10 s test over `streams` streams that moved `gbits` Gbit/s in all.
report::SideReport side(std::uint32_t streams, double gbits) {
  report::SideReport side;
  side.present = true;
  side.wall_s = kWall;
  for (std::uint32_t i = 0; i < streams; ++i) {
    stats::StreamFigures figures;
    figures.bytes = static_cast<std::uint64_t>(gbits * 1e9 / 8 * kWall / streams);
    figures.calls = 1000;
    figures.end_s = kWall;
    side.totals.push_back(figures);
  }
  side.evidence.cpus = {0, 1, 2, 3};
  for (std::uint32_t cpu = 0; cpu < 4; ++cpu) side.cores.push_back({cpu, 0.2, 0.02});
  side.evidence.threads = {{"testio-w0", 1.0}, {"testio-w1", 1.0}};
  side.cpu = {1.0, 1.0};
  return side;
}

// The sender's TCP_INFO time accounting: shares of the busy time each stream spent stalled.
void stalls(report::SideReport& sender, double busy_share, double rwnd, double sndbuf) {
  sender.evidence.streams.clear();
  for (std::size_t i = 0; i < sender.totals.size(); ++i) {
    stats::StreamEnd end;
    end.tcp.valid = end.tcp.chrono = true;
    end.tcp.busy_us = static_cast<std::uint64_t>(busy_share * kWall * 1e6);
    end.tcp.rwnd_limited_us = static_cast<std::uint64_t>(rwnd * static_cast<double>(end.tcp.busy_us));
    end.tcp.sndbuf_limited_us = static_cast<std::uint64_t>(sndbuf * static_cast<double>(end.tcp.busy_us));
    end.tcp.min_rtt_us = 100;
    end.tcp.bytes_sent = sender.totals[i].bytes;
    sender.evidence.streams.push_back(end);
  }
}

// Intervals whose TCP samples carry `rtt_us` and a retransmit count growing to `retransmits`.
void samples(report::SideReport& sender, std::uint32_t rtt_us, std::uint32_t retransmits) {
  for (int k = 0; k < 10; ++k) {
    stats::IntervalRecord record;
    record.start_s = k, record.end_s = k + 1;
    for (std::size_t i = 0; i < sender.totals.size(); ++i) {
      stats::StreamSample sample;
      sample.tcp.valid = true;
      sample.tcp.rtt_us = rtt_us;
      sample.tcp.total_retrans = retransmits * static_cast<std::uint32_t>(k + 1) / 10;
      record.streams.push_back(sample);
    }
    sender.intervals.push_back(record);
  }
}

report::TestReport test(std::uint32_t streams, double gbits) {
  report::TestReport report;
  report.start.spec.connections = streams;
  report.sender = side(streams, gbits);
  report.receiver = side(streams, gbits);
  stalls(report.sender, 1.0, 0.1, 0.0);
  samples(report.sender, 150, 0);
  return report;
}

const report::RuledOut* other(const report::Verdict& verdict, const std::string& limit) {
  auto found = std::find_if(verdict.others.begin(), verdict.others.end(),
                            [&](const report::RuledOut& each) { return each.limit == limit; });
  return found == verdict.others.end() ? nullptr : &*found;
}

TEST(Verdict, PacedOnPurposeIsRateLimit) {
  report::TestReport report = test(4, 0.99);
  report.start.spec.rate_bps = 250e6;
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "rate_limit");
  EXPECT_GE(verdict.confidence, 0.9);
  EXPECT_EQ(verdict.direction, "forward");
}

TEST(Verdict, PaceNotReachedIsNotTheLimit) {
  report::TestReport report = test(4, 0.5);
  report.start.spec.rate_bps = 250e6;
  report.receiver.evidence.threads = {{"testio-w0", 9.8}};
  report.receiver.evidence.tcp_ext = {{"TCPToZeroWindowAdv", 50}};
  stalls(report.sender, 1.0, 0.8, 0.0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "receiver_cpu");
  ASSERT_NE(other(verdict, "rate_limit"), nullptr);
  EXPECT_NE(other(verdict, "rate_limit")->why.find("below the pace"), std::string::npos);
}

TEST(Verdict, AReceiverThatClosesItsWindowForWantOfCpuIsReceiverCpu) {
  report::TestReport report = test(8, 20);
  report.receiver.evidence.threads = {{"testio-w1", 9.7}, {"testio-w0", 9.5}};
  report.receiver.evidence.tcp_ext = {{"TCPToZeroWindowAdv", 200}};
  stalls(report.sender, 1.0, 0.7, 0.0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "receiver_cpu");
  ASSERT_NE(other(verdict, "receive_window"), nullptr);
}

TEST(Verdict, ABusyReceiverWhoseWindowNeverClosesIsNotTheLimit) {
  report::TestReport report = test(8, 20);
  report.receiver.evidence.threads = {{"testio-w1", 9.7}};
  stalls(report.sender, 1.0, 0.05, 0.0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_NE(verdict.limit, "receiver_cpu");
  EXPECT_NE(other(verdict, "receiver_cpu")->why.find("kept its window open"), std::string::npos);
}

TEST(Verdict, ASmallWindowOnABusyHostIsStillReceiveWindow) {
  // Others' load keeps the receiver waiting for a CPU, but its window never closed: the buffer is the limit.
  report::TestReport report = test(1, 1.1);
  report.receiver.evidence.threads = {{"testio-w0", 4.5, 4.5}};
  for (stats::CoreShare& core : report.receiver.cores) core.busy = 0.97;
  stalls(report.sender, 1.0, 0.67, 0.0);
  EXPECT_EQ(judge(report, "forward").limit, "receive_window");
}

TEST(Verdict, AThreadKeptOffItsCpuCountsAsSaturated) {
  report::TestReport report = test(2, 9);
  report.sender.evidence.cpus = {0};
  report.sender.evidence.threads = {{"testio-w0", 1.6, 4.8}};  // ran 16%, waited 48% of the time
  report.sender.cores = {{0, 0.93, 0.1}, {1, 0.2, 0.0}};
  report.sender.cpu = {0.1, 1.5};
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "sender_cpu");
}

TEST(Verdict, BusyCpusUnderTasksetAreSenderCpu) {
  report::TestReport report = test(2, 5);
  report.sender.evidence.cpus = {0};
  report.sender.cores = {{0, 1.0, 0.05}, {1, 0.1, 0.0}, {2, 0.1, 0.0}, {3, 0.1, 0.0}};
  report.sender.evidence.threads = {{"testio-w0", 4.8}};  // half of the one CPU it may use
  report.sender.cpu = {0.5, 4.5};
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "sender_cpu");
}

TEST(Verdict, ClosedWindowWithIdleTestioReceiverIsReceiveWindow) {
  report::TestReport report = test(2, 0.4);
  stalls(report.sender, 1.0, 0.93, 0.0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "receive_window");
  EXPECT_GE(verdict.confidence, 0.8);
}

TEST(Verdict, APeerWindowUnderHalfTheCwndBindsTheFlightAtAPartialStall) {
  report::TestReport report = test(1, 0.006);
  stalls(report.sender, 1.0, 0.41, 0.0);
  stats::StreamEnd& end = report.sender.evidence.streams.at(0);
  end.tcp.snd_cwnd_bytes = 26'064;
  end.tcp.snd_wnd = 60'000;
  EXPECT_NE(judge(report, "forward").limit, "receive_window");  // 41% with the window above the cwnd
  end.tcp.snd_wnd = 11'008;
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "receive_window");
  EXPECT_TRUE(std::any_of(verdict.evidence.begin(), verdict.evidence.end(),
                          [](const report::NamedFigure& figure) { return figure.name == "window_over_cwnd"; }));
}

TEST(Verdict, ClosedWindowOfAPeerThatIsNotTestioIsPeerReceiver) {
  report::TestReport report = test(1, 0.05);
  report.start.peer_protocol = "plain TCP";
  report.receiver = report::SideReport{};
  stalls(report.sender, 1.0, 0.95, 0.0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "peer_receiver");
}

TEST(Verdict, FullSendBufferIsSendBuffer) {
  report::TestReport report = test(2, 0.8);
  stalls(report.sender, 1.0, 0.0, 0.6);
  EXPECT_EQ(judge(report, "forward").limit, "send_buffer");
}

TEST(Verdict, LossAndQueueWithCpusIdleIsNetwork) {
  report::TestReport report = test(2, 0.19);
  report.sender.intervals.clear();
  samples(report.sender, 20000, 300);
  stalls(report.sender, 1.0, 0.0, 0.0);
  for (stats::StreamEnd& end : report.sender.evidence.streams) end.tcp.bytes_retrans = end.tcp.bytes_sent / 100;
  report.sender.evidence.qdisc = {"tb1", "tbf", 250, 9000, 60000};
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "network");
  EXPECT_GE(verdict.confidence, 0.9);
  auto figure = std::find_if(verdict.evidence.begin(), verdict.evidence.end(),
                             [](const report::NamedFigure& each) { return each.name == "qdisc_drops"; });
  ASSERT_NE(figure, verdict.evidence.end());
  EXPECT_EQ(figure->value, 250);
}

TEST(Verdict, FramesTheReceiversNicHadNoRoomForAreTheNetworksLoss) {
  report::TestReport report = test(2, 0.19);
  stalls(report.sender, 1.0, 0.0, 0.0);
  report.receiver.evidence.nic = {"eth0", {0, 480, 20, 0}};
  report.sender.evidence.nic = {"eth1", {}};
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "network");
  EXPECT_NE(verdict.summary.find("500 frames dropped arriving at the receiver's eth0"), std::string::npos) << verdict.summary;
  auto figure = std::find_if(verdict.evidence.begin(), verdict.evidence.end(),
                             [](const report::NamedFigure& each) { return each.name == "receiver_nic_drops"; });
  ASSERT_NE(figure, verdict.evidence.end());
  EXPECT_EQ(figure->value, 500);
  EXPECT_TRUE(std::any_of(verdict.advice.begin(), verdict.advice.end(),
                          [](const std::string& line) { return line.find("ethtool -G eth0") != std::string::npos; }));
  report.receiver.evidence.nic = {"eth0", {}};
  EXPECT_NE(judge(report, "forward").limit, "network");  // cwnd-limited alone, nothing lost: not the path
}

TEST(Verdict, CwndLimitedWithoutLossOrQueueIsNotNetwork) {
  report::TestReport report = test(2, 1);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "unknown");
  EXPECT_FALSE(verdict.summary.empty());
  EXPECT_FALSE(verdict.advice.empty());
}

TEST(Verdict, OneSoftirqCpuForManyFlowsIsRxSoftirq) {
  report::TestReport report = test(16, 12);
  report.receiver.cores = {{0, 0.95, 0.85}, {1, 0.3, 0.02}, {2, 0.25, 0.01}, {3, 0.2, 0.01}};
  EXPECT_EQ(judge(report, "forward").limit, "rx_softirq");
}

TEST(Verdict, EveryFlowArrivingOnTheHotCpuIsRxSoftirqThoughOthersAreBusyToo) {
  report::TestReport report = test(8, 12);
  report.receiver.cores = {{0, 0.95, 0.6}, {1, 0.9, 0.3}, {2, 0.9, 0.3}, {3, 0.9, 0.3}};
  EXPECT_NE(judge(report, "forward").limit, "rx_softirq");  // hot, but not three times the others
  report.receiver.incoming_cpus.assign(8, 0);
  report::Verdict verdict = judge(report, "forward");
  EXPECT_EQ(verdict.limit, "rx_softirq");
  EXPECT_NE(verdict.summary.find("every flow arrived there"), std::string::npos);
}

TEST(Verdict, BuffersAreEvidenceOnlyFromTheSideThatReadThemBack) {
  report::TestReport report = test(2, 0.4);
  stalls(report.sender, 1.0, 0.93, 0.0);
  report.start.rcvbuf_actual = 16384;
  auto has = [](const report::Verdict& verdict, const char* name) {
    return std::any_of(verdict.evidence.begin(), verdict.evidence.end(),
                       [&](const report::NamedFigure& figure) { return figure.name == name; });
  };
  EXPECT_FALSE(has(judge(report, "forward"), "receiver_buffer"));  // a sending client read back its own
  report.start.local_is_sender = false;
  EXPECT_TRUE(has(judge(report, "forward"), "receiver_buffer"));
}

TEST(Verdict, OneSaturatedConnectionWithCpusToSpareIsTooFewStreams) {
  report::TestReport report = test(1, 25);
  report.sender.evidence.threads = {{"testio-w0", 9.9}};
  EXPECT_EQ(judge(report, "forward").limit, "too_few_streams");
}

TEST(Verdict, SaturatedThreadsOnEveryCpuAreACpuLimitNotTooFewStreams) {
  report::TestReport report = test(8, 40);
  report.sender.evidence.threads = {{"testio-w0", 9.9}};
  for (stats::CoreShare& core : report.sender.cores) core.busy = 0.98;
  EXPECT_EQ(judge(report, "forward").limit, "sender_cpu");
}

TEST(Verdict, EveryOtherLimitIsListedWithWhy) {
  report::TestReport report = test(4, 0.99);
  report.start.spec.rate_bps = 250e6;
  report::Verdict verdict = judge(report, "forward");
  for (std::string_view limit : kLimits) {
    if (limit == "unknown" || limit == verdict.limit) continue;
    const report::RuledOut* found = other(verdict, std::string(limit));
    ASSERT_NE(found, nullptr) << limit;
    EXPECT_FALSE(found->why.empty()) << limit;
  }
}

TEST(Verdict, MissingCountersAreNamed) {
  report::TestReport report = test(2, 1);
  report.receiver.evidence.missing = {"TCPZeroWindowDrop"};
  EXPECT_EQ(judge(report, "forward").missing, std::vector<std::string>{"TCPZeroWindowDrop"});
}

TEST(Verdict, BidirGetsOneVerdictPerDirection) {
  report::TestReport report = test(2, 1);
  report.start.spec.direction = spec::Direction::bidir;
  report.bidir_reverse = std::make_shared<report::TestReport>(test(2, 1));
  std::vector<report::Verdict> verdicts = diagnose(report);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].direction, "forward");
  EXPECT_EQ(verdicts[1].direction, "reverse");
}

TEST(Verdict, AReverseTestIsJudgedAsReverse) {
  report::TestReport report = test(2, 1);
  report.start.spec.direction = spec::Direction::reverse;
  EXPECT_EQ(diagnose(report).at(0).direction, "reverse");
}

}  // namespace
}  // namespace testio::diagnosis
