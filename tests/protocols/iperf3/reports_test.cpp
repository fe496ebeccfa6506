// One report per direction of an iperf3 test: this side's figures beside the peer's results.
#include <gtest/gtest.h>

#include "protocols/iperf3/reports.hpp"

namespace testio::iperf3 {
namespace {

report::StartInfo four_connections() {
  report::StartInfo start;
  for (std::uint16_t port = 1; port <= 4; ++port) start.connected.push_back({"127.0.0.1", port, "127.0.0.1", 5201});
  // A bidirectional test of two streams each way: four connections, two per direction.
  start.spec.connections = 2;
  start.spec.direction = spec::Direction::bidir;
  return start;
}

DirectionResults received_on(std::vector<std::uint32_t> connections, std::uint64_t bytes) {
  DirectionResults local;
  local.present = true;
  local.connections = std::move(connections);
  for (std::size_t i = 0; i < local.connections.size(); ++i) {
    stats::StreamFigures figures;
    figures.bytes = bytes;
    figures.end_s = 1.0;
    local.side.streams.push_back(figures);
  }
  local.side.wall_s = 1.0;
  return local;
}

TEST(Iperf3Reports, TheReverseHalfOfABidirTestKeepsItsOwnConnections) {
  Results peer;
  peer.cpu_user = 10;
  peer.cpu_system = 30;
  peer.streams = {{1, 100, -1, 0, 1}, {3, 200, -1, 0, 1}, {4, 300, 5, 0, 2}, {5, 400, 7, 0, 2}};
  report::TestReport report = direction_report(four_connections(), received_on({2, 3}, 999), false, peer);
  EXPECT_FALSE(report.start.local_is_sender);
  ASSERT_EQ(report.start.connected.size(), 2u);
  EXPECT_EQ(report.start.connected[0].local_port, 3);
  EXPECT_EQ(report.start.connections(), 2u);
  ASSERT_EQ(report.sender.totals.size(), 2u);
  EXPECT_EQ(report.sender.totals[0].bytes, 300u);  // connection 2 is iperf3 stream 4
  EXPECT_EQ(report.sender.totals[1].bytes, 400u);
  EXPECT_EQ(report.receiver.totals[0].bytes, 999u);
  EXPECT_DOUBLE_EQ(report.sender.wall_s, 2.0);
  EXPECT_DOUBLE_EQ(report.sender.cpu.system_s, 0.6);  // 30% of 2 s
}

TEST(Iperf3Reports, AStreamThePeerLeftOutIsMarkedFailed) {
  Results peer;
  peer.streams = {{1, 100, -1, 0, 1}};
  report::TestReport report = direction_report(four_connections(), received_on({0, 1}, 100), true, peer);
  ASSERT_EQ(report.receiver.totals.size(), 2u);
  EXPECT_FALSE(report.receiver.totals[0].failed);
  EXPECT_TRUE(report.receiver.totals[1].failed);
  EXPECT_TRUE(report.start.local_is_sender);
}

}  // namespace
}  // namespace testio::iperf3
