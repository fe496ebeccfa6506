// The two lifecycles against each other in one process: a Server on 127.0.0.1 and run_client(),
// one test per workload and direction, each side's report captured. Then the steps that can be
// seen alone: what a ServerTest takes while it gathers, and how a side's figures become reports.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/ip/tcp.hpp>
#include <spdlog/spdlog.h>

#include "engines/loopback_pairs.hpp"
#include "lifecycle/client_lifecycle.hpp"
#include "lifecycle/directions.hpp"
#include "lifecycle/parts.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "protocols/testio/client_peer.hpp"
#include "server/server.hpp"
#include "workloads/registry.hpp"
#include "workloads/part.hpp"
#include "workloads/rr/rr.hpp"
#include "workloads/transfers/transfers.hpp"

namespace testio::lifecycle {
namespace {

using server::Server;

// The client's lifecycle against a testio server, as the program runs it.
int run_testio_client(const config::Config& config, report::Reporter& reporter) {
  return run_client(config, reporter, [&config] { return control::testio_peer(config); });
}

using testing::eventually;

// Keeps what a lifecycle reports. Touched by one lifecycle's thread, read once it has ended.
class CapturingReporter final : public report::Reporter {
 public:
  void start(const report::StartInfo& start) override { start_ = start; }
  void interval(const stats::IntervalRecord&) override { ++intervals_; }
  void end(const report::TestReport& report) override {
    std::lock_guard lock(mutex_);
    report_ = report;
    ended_.store(true);
  }
  void error(const std::string& message) override {
    std::lock_guard lock(mutex_);
    errors_.push_back(message);
  }
  bool ended() const { return ended_.load(); }
  report::TestReport report() const {
    std::lock_guard lock(mutex_);
    return report_;
  }
  std::vector<std::string> errors() const {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  int intervals() const { return intervals_; }

 private:
  mutable std::mutex mutex_;
  report::StartInfo start_;
  report::TestReport report_;
  std::vector<std::string> errors_;
  std::atomic<bool> ended_{false};
  int intervals_ = 0;
};

// The log's registry is made here, before any lifecycle's thread logs (spdlog makes it on first
// use, which TSan cannot see synchronised across threads in the uninstrumented library).
class QuietLog : public ::testing::Environment {
 public:
  void SetUp() override { spdlog::set_level(spdlog::level::warn); }
};
const auto* const quiet_log = ::testing::AddGlobalTestEnvironment(new QuietLog);

// Each of a server's test reports, passed to the one reporter a test watches.
class Forwarding final : public report::Reporter {
 public:
  explicit Forwarding(report::Reporter& to) : to_(to) {}
  void start(const report::StartInfo& start) override { to_.start(start); }
  void interval(const stats::IntervalRecord& record) override { to_.interval(record); }
  void end(const report::TestReport& report) override { to_.end(report); }
  void error(const std::string& message) override { to_.error(message); }

 private:
  report::Reporter& to_;
};

// testio -s on 127.0.0.1 and a kernel-chosen port, on a thread of its own.
class LocalServer {
 public:
  explicit LocalServer(spec::Limits limits = {}, const std::string& served = "") {
    config_.role = config::Role::server;
    config_.bind_address = "127.0.0.1";
    config_.port = 0;
    config_.limits = limits;
    config_.file = served;
    server_ = std::make_unique<Server>(io_, config_, metrics_);
    port_ = server_->port();
    asio::co_spawn(io_, server_->serve(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LocalServer() {
    io_.stop();
    thread_.join();
    server_.reset();  // its sockets before the io_context they belong to
  }
  std::uint16_t port() const { return port_; }
  const CapturingReporter& reporter() const { return reporter_; }

 private:
  config::Config config_;
  CapturingReporter reporter_;
  // Before the io_context: the frames of tests it still holds at the end go with it, and their
  // reports tell the metrics as they go.
  metrics::ServerMetrics metrics_{[this](const report::ReporterOptions&) {
    return std::make_unique<Forwarding>(reporter_);
  }};
  asio::io_context io_{1};
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

config::Config client_of(const LocalServer& server, spec::TestSpec spec) {
  config::Config config;
  config.host = "127.0.0.1";
  config.port = server.port();
  config.spec = std::move(spec);
  return config;
}

spec::TestSpec timed(std::uint32_t connections, spec::Direction direction = spec::Direction::forward) {
  spec::TestSpec spec;
  spec.connections = connections;
  spec.duration_s = 0.3;
  spec.interval_s = 0.1;
  spec.direction = direction;
  return spec;
}

// Every stream of every direction counted the same on both ends, and (unless the streams share
// the work, as transfer slots share one plan) every stream moved bytes.
enum class EveryStream { moves, may_idle };
void expect_counts_match(const report::TestReport& report, EveryStream every = EveryStream::moves) {
  for (const report::TestReport* direction : {&report, report.bidir_reverse.get()}) {
    if (!direction) continue;
    ASSERT_EQ(direction->sender.totals.size(), direction->receiver.totals.size());
    for (std::size_t i = 0; i < direction->sender.totals.size(); ++i) {
      if (every == EveryStream::moves) {
        EXPECT_GT(direction->sender.totals[i].bytes, 0u) << "connection " << i;
      }
      EXPECT_EQ(direction->sender.totals[i].bytes, direction->receiver.totals[i].bytes) << "connection " << i;
    }
    EXPECT_TRUE(direction->mismatched_streams.empty());
  }
}

TEST(Lifecycles, BulkTestsEachWayCountTheSameOnBothSides) {
  for (spec::Direction direction : {spec::Direction::forward, spec::Direction::reverse, spec::Direction::bidir}) {
    LocalServer server;
    CapturingReporter client;
    ASSERT_EQ(run_testio_client(client_of(server, timed(2, direction)), client), 0) << spec::to_string(direction);
    ASSERT_TRUE(eventually([&] { return server.reporter().ended(); }));
    report::TestReport mine = client.report(), theirs = server.reporter().report();
    expect_counts_match(mine);
    expect_counts_match(theirs);
    EXPECT_EQ(mine.bidir_reverse != nullptr, direction == spec::Direction::bidir);
    EXPECT_EQ(mine.start.local_is_sender, direction != spec::Direction::reverse);
    EXPECT_EQ(theirs.start.spec.direction, direction);  // the server's report knows the test as asked
    EXPECT_GT(client.intervals(), 0);
  }
}

TEST(Lifecycles, RequestResponseCountsEveryMessage) {
  LocalServer server;
  CapturingReporter client;
  spec::TestSpec spec;
  spec.workload = "rr";
  spec.connections = 3;
  spec.duration_s = 0;
  workloads::set_part(spec, workloads::rr::RrSpec{256, 1, 50});
  ASSERT_EQ(run_testio_client(client_of(server, spec), client), 0);
  report::TestReport report = client.report();
  const auto* rr = report.section<workloads::rr::RrSection>();
  ASSERT_NE(rr, nullptr);
  EXPECT_EQ(rr->summary().messages, 150u);
  expect_counts_match(report);
  ASSERT_TRUE(eventually([&] { return server.reporter().ended(); }));
  EXPECT_EQ(workloads::part_of<workloads::rr::RrSpec>(server.reporter().report().start.spec).messages, 50u);
}

TEST(Lifecycles, TransfersOpenTheirOwnConnectionsAndTheServerRoutesThem) {
  LocalServer server;
  CapturingReporter client;
  spec::TestSpec spec;
  spec.workload = "transfers";
  spec.connections = 3;
  spec.duration_s = 0;
  workloads::set_part(spec, workloads::transfers::TransfersSpec{20, 10000, false});
  ASSERT_EQ(run_testio_client(client_of(server, spec), client), 0);
  report::TestReport report = client.report();
  const auto* transfers = report.section<workloads::transfers::TransfersSection>();
  ASSERT_NE(transfers, nullptr);
  EXPECT_EQ(transfers->summary().completed, 20u);
  EXPECT_FALSE(report.start.local_is_sender);  // the server sends
  std::uint64_t received = 0;
  for (const stats::StreamFigures& slot : report.receiver.totals) received += slot.bytes;
  EXPECT_EQ(received, 20u * 10000);
  ASSERT_TRUE(eventually([&] { return server.reporter().ended(); }));
  // The slots take transfer numbers from one plan: on a slow run (TSan) two slots may take all
  // twenty before the third starts, so a slot may move nothing.
  report::TestReport theirs = server.reporter().report();
  expect_counts_match(theirs, EveryStream::may_idle);
  std::uint64_t sent = 0;
  for (const stats::StreamFigures& slot : theirs.sender.totals) sent += slot.bytes;
  EXPECT_EQ(sent, 20u * 10000);
}

TEST(Lifecycles, AFileIsSentOnceAndBothSidesDigestsMatch) {
  const std::string path = ::testing::TempDir() + "testio-lifecycle-file";
  {
    std::ofstream file(path, std::ios::binary);
    for (int i = 0; i < 100000; ++i) file << static_cast<char>(i * 7);
  }
  LocalServer server;
  CapturingReporter client;
  spec::TestSpec spec = timed(3);
  spec.hash = util::HashKind::sha1;
  config::Config config = client_of(server, spec);
  config.file = path;
  EXPECT_EQ(run_testio_client(config, client), 0);
  report::TestReport report = client.report();
  EXPECT_TRUE(report.digests.matches());
  EXPECT_EQ(report.start.spec.total_bytes, 100000u);  // the workload completed the spec from the file
  std::remove(path.c_str());
}

TEST(Lifecycles, ARequestBreakingTheServersCapsIsRefusedBeforeAnyDataMoves) {
  spec::Limits tight;
  tight.max_connections = 2;
  LocalServer server(tight);
  CapturingReporter client;
  EXPECT_EQ(run_testio_client(client_of(server, timed(3)), client), 1);
  ASSERT_EQ(client.errors().size(), 1u);
  EXPECT_EQ(client.errors()[0],
            "the server refused the test: invalid test request: the connection count 3 is above the cap of 2 "
            "(--max-connections)");
  EXPECT_FALSE(client.ended());
}

TEST(Lifecycles, TransfersLargerThanTheServedFileAreRefused) {
  const std::string path = ::testing::TempDir() + "testio-served-file";
  std::ofstream(path) << "tiny";
  LocalServer server({}, path);
  CapturingReporter client;
  spec::TestSpec spec;
  spec.workload = "transfers";
  spec.duration_s = 0;
  workloads::set_part(spec, workloads::transfers::TransfersSpec{1, 100, false});
  EXPECT_EQ(run_testio_client(client_of(server, spec), client), 1);
  ASSERT_EQ(client.errors().size(), 1u);
  EXPECT_NE(client.errors()[0].find("is larger"), std::string::npos) << client.errors()[0];
  std::remove(path.c_str());
}

// The server's parts of a test, as Server::admit() makes them.
TestParts server_parts(const spec::TestSpec& spec) {
  return TestParts(spec, [](std::size_t, const spec::TestSpec& part) { return workloads::of(part).server(part, {}); });
}

// What a test takes while it gathers its connections, and once it runs.
TEST(ServerTestSteps, AttachTakesEachConnectionOnceAndOnlyWhileGathering) {
  asio::io_context io;
  spec::TestSpec spec = timed(2);
  control::TestRequest request{spec, 1, "test", ""};
  ServerTest test(io.get_executor(), 42, request, server_parts(spec), {}, asio::ip::address{}, asio::ip::address{});
  auto connection = [&] { return testing::loopback_pair(io).second; };
  EXPECT_EQ(test.attach(0, connection()), "");
  EXPECT_EQ(test.attach(0, connection()), "stream 0 arrived twice");
  EXPECT_EQ(test.attach(2, connection()), "stream 2 is beyond the test's 2 connections");
  spec.workload = "transfers";
  spec.duration_s = 0;
  workloads::set_part(spec, workloads::transfers::TransfersSpec{5, 10, false});
  ServerTest transfers(io.get_executor(), 43, control::TestRequest{spec, 1, "test", ""}, server_parts(spec), {},
                        asio::ip::address{}, asio::ip::address{});
  EXPECT_EQ(transfers.attach(0, connection()), "the transfers have not started (or have ended)");
}

// How one side's figures and the peer's become the reports, for each side and layout.
TEST(Reports, EachDirectionPutsTheSendersFiguresBesideTheReceivers) {
  report::StartInfo start;
  start.spec = timed(1, spec::Direction::bidir);
  start.connected.resize(2);
  auto figures = [](std::uint64_t bytes) {
    control::SideResults side;
    side.streams.push_back({bytes, 1, 0, 1, false});
    return side;
  };
  const workloads::DirectionLayout layout = workloads::DirectionLayout::of(spec::Direction::bidir, 1);
  control::DirectedResults mine{figures(100), figures(200)};
  control::DirectedResults theirs{figures(100), figures(201)};
  report::TestReport report = side_by_side(start, layout, workloads::Side::client, mine, theirs);
  EXPECT_TRUE(report.start.local_is_sender);
  EXPECT_TRUE(report.mismatched_streams.empty());
  ASSERT_TRUE(report.bidir_reverse);
  EXPECT_FALSE(report.bidir_reverse->start.local_is_sender);
  EXPECT_EQ(report.bidir_reverse->sender.totals[0].bytes, 201u);  // the server sent the reverse
  EXPECT_EQ(report.bidir_reverse->mismatched_streams, std::vector<std::uint32_t>{0});
  EXPECT_EQ(report.other_bytes, 201u);
  report::TestReport server_view = side_by_side(start, layout, workloads::Side::server, theirs, mine);
  EXPECT_FALSE(server_view.start.local_is_sender);
  EXPECT_EQ(server_view.sender.totals[0].bytes, 100u);
}

}  // namespace
}  // namespace testio::lifecycle
