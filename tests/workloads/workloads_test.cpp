// Each workload as the lifecycles use it: its rules (through the registry), and its two sides'
// streams run against each other over loopback pairs, as a client's and a server's would.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engines/loopback_pairs.hpp"
#include "engines/worker_pool.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/registry.hpp"
#include "workloads/rr/rr.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"

namespace testio::workloads {
namespace {

using testing::eventually;

// A client side and a server side of one test, each on its own workers, their streams on the two
// ends of the same loopback pairs.
class SidesAgainstEachOther {
 public:
  SidesAgainstEachOther(TestSide& client, TestSide& server) : layout_(client.layout()) {
    const std::uint32_t total = layout_.total();
    for (auto* pool : {&client_pool_, &server_pool_}) *pool = std::make_unique<engines::WorkerPool>(2);
    client_counters_ = std::make_unique<stats::StreamCounters[]>(total);
    server_counters_ = std::make_unique<stats::StreamCounters[]>(total);
    digests_.resize(2 * total);
    for (std::uint32_t i = 0; i < total; ++i) {
      auto [near, far] = testing::loopback_pair(control_);
      add(client, *client_pool_, i, client_counters_[i], &digests_[i], std::move(near));
      add(server, *server_pool_, i, server_counters_[i], &digests_[total + i], std::move(far));
    }
    client_pool_->start();
    server_pool_->start();
  }

  // Runs both sides for `window` (0: until their counts are done); true when every stream ended.
  bool run(std::chrono::milliseconds window = {}) {
    engines::TestClock clock{engines::Clock::now()};
    if (window.count()) clock.deadline = clock.start + window;
    server_pool_->begin(clock);
    client_pool_->begin(clock);
    return eventually([&] {
      for (std::uint32_t i = 0; i < layout_.total(); ++i)
        if (!client_counters_[i].finished.load() || !server_counters_[i].finished.load()) return false;
      return true;
    });
  }

  ~SidesAgainstEachOther() {
    client_pool_->stop();  // the workers go first: their streams write the counters
    server_pool_->stop();
  }

  std::uint64_t client_bytes(std::uint32_t i) const { return client_counters_[i].bytes.load(); }
  std::uint64_t server_bytes(std::uint32_t i) const { return server_counters_[i].bytes.load(); }
  const std::string& server_digest(std::uint32_t i) const { return digests_[layout_.total() + i]; }

 private:
  void add(TestSide& side, engines::WorkerPool& pool, std::uint32_t i, stats::StreamCounters& counters,
           std::string* digest, asio::ip::tcp::socket socket) {
    engines::Worker& worker = pool.worker_for_stream(i);
    StreamPlace place{i, i, worker, pool.size(), counters, digest, {}, {}, {}};
    worker.add_stream(side.make_stream(std::move(place), testing::moved_to(worker.context(), std::move(socket))));
  }

  asio::io_context control_;
  DirectionLayout layout_;
  std::unique_ptr<engines::WorkerPool> client_pool_, server_pool_;
  std::unique_ptr<stats::StreamCounters[]> client_counters_, server_counters_;
  std::vector<std::string> digests_;
};

TEST(Bulk, EachDirectionsSenderMatchesItsReceiver) {
  for (spec::Direction direction : {spec::Direction::forward, spec::Direction::reverse, spec::Direction::bidir}) {
    spec::TestSpec spec;
    spec.connections = 2;
    spec.direction = direction;
    spec.duration_s = 0;
    spec.total_bytes = (1ull << 20) + 7;
    spec.buffer = 64 * 1024;
    auto client = bulk::make_side(Side::client, spec);
    auto server = bulk::make_side(Side::server, spec);
    SidesAgainstEachOther sides(*client, *server);
    ASSERT_TRUE(sides.run()) << spec::to_string(direction);
    const DirectionLayout layout = client->layout();
    for (bool forward : {true, false}) {
      std::uint64_t moved = 0;
      for (std::uint32_t i : layout.connections(forward)) {
        EXPECT_EQ(sides.client_bytes(i), sides.server_bytes(i)) << spec::to_string(direction) << " connection " << i;
        moved += sides.client_bytes(i);
      }
      // -n is per direction: each direction's senders split it between them.
      if (layout.count(forward)) {
        EXPECT_EQ(moved, spec.total_bytes) << spec::to_string(direction);
      }
    }
  }
}

TEST(Bulk, AHashedTestLeavesTheReceiversDigests) {
  spec::TestSpec spec;
  spec.duration_s = 0;
  spec.total_bytes = 300000;
  spec.hash = util::HashKind::sha256;
  auto client = bulk::make_side(Side::client, spec);
  auto server = bulk::make_side(Side::server, spec);
  SidesAgainstEachOther sides(*client, *server);
  ASSERT_TRUE(sides.run());
  EXPECT_EQ(sides.server_digest(0).size(), 64u);
}

TEST(Rr, TheServerEchoesEveryMessage) {
  spec::TestSpec spec;
  spec.workload = "rr";
  spec.connections = 2;
  spec.duration_s = 0;
  set_part(spec, rr::RrSpec{512, 2, 40});
  auto client = rr::client_side(spec);
  auto server = workloads::of(spec).server(spec, {});
  SidesAgainstEachOther sides(*client, *server);
  ASSERT_TRUE(sides.run());
  for (std::uint32_t i = 0; i < 2; ++i) EXPECT_EQ(sides.client_bytes(i), 40u * 512);
  report::TestReport report;
  report.sender.wall_s = 1;
  client->add_to_report(report);
  const auto* rr = report.section<rr::RrSection>();
  ASSERT_NE(rr, nullptr);
  EXPECT_EQ(rr->summary().messages, 80u);
  EXPECT_EQ(rr->summary().message_size, 512u);
  EXPECT_EQ(rr->key(), "rr");
}

std::string broken_rule(const spec::TestSpec& spec) {
  try {
    check(spec, spec::Limits{});
  } catch (const spec::SpecError& error) {
    return error.what();
  }
  return "";
}

TEST(Registry, EveryWorkloadByItsNameAndItsOwnRules) {
  for (const char* name : {"stream", "rr", "transfers"}) EXPECT_NE(find(name), nullptr) << name;
  spec::TestSpec spec;
  spec.workload = "udp?";
  EXPECT_EQ(broken_rule(spec), "workload \"udp?\" is not supported");
  spec = {};
  EXPECT_EQ(broken_rule(spec), "");
  spec.duration_s = 0;
  EXPECT_NE(broken_rule(spec).find("-t must be more than 0"), std::string::npos);
  spec = {};
  spec.workload = "rr";
  EXPECT_EQ(broken_rule(spec), "");
  spec.direction = spec::Direction::reverse;
  EXPECT_NE(broken_rule(spec).find("bulk tests"), std::string::npos);
  spec = {};
  spec.workload = "transfers";
  spec.duration_s = 0;
  EXPECT_NE(broken_rule(spec).find("--transfers must be at least 1"), std::string::npos);
  set_part(spec, transfers::TransfersSpec{10, 1000, false});
  EXPECT_EQ(broken_rule(spec), "");
  spec.omit_s = 1;
  EXPECT_NE(broken_rule(spec).find("-O"), std::string::npos);
}

// A composed test keeps every workload's own rules, each refusal naming which workload broke it.
TEST(Registry, EachWorkloadOfACompositionKeepsItsOwnRules) {
  spec::TestSpec spec;
  spec::TestSpec probe;
  probe.workload = "rr";
  spec.with.push_back(probe);
  EXPECT_EQ(broken_rule(spec), "");
  spec.with[0].direction = spec::Direction::reverse;
  EXPECT_EQ(broken_rule(spec).rfind("workload 2 (rr): ", 0), 0u) << broken_rule(spec);
  spec.with[0] = probe;
  spec.with[0].workload = "nope";
  EXPECT_EQ(broken_rule(spec), "workload 2 (nope): workload \"nope\" is not supported");
  spec.with[0] = probe;
  spec.connections = 0;
  EXPECT_EQ(broken_rule(spec).rfind("workload 1 (stream): ", 0), 0u) << broken_rule(spec);
  // A workload's own count (--num) ends it apart from the window: not beside another.
  spec.connections = 1;
  set_part(spec.with[0], rr::RrSpec{64, 1, 100});
  EXPECT_NE(broken_rule(spec).find("workload 2 (rr) is counted"), std::string::npos) << broken_rule(spec);
}

// A workload's part of the spec is its own: the settings it takes, each of its kind; the command
// line drops another's (an older report's, one the command line's workload replaced).
TEST(Registry, AWorkloadTakesOnlyItsOwnSettings) {
  spec::TestSpec spec;
  spec.workload = "rr";
  set_part(spec, rr::RrSpec{64, 4, 0});
  EXPECT_EQ(broken_rule(spec), "");
  EXPECT_EQ(part_of<rr::RrSpec>(spec).depth, 4u);
  spec.settings.set("transfers", std::uint64_t{3});
  EXPECT_EQ(broken_rule(spec), "field \"transfers\" is not a setting of the rr workload");
  keep_own_settings(spec);
  EXPECT_EQ(broken_rule(spec), "");
  EXPECT_EQ(spec.settings.find("transfers"), nullptr);
  spec.settings.set("depth", true);
  EXPECT_EQ(broken_rule(spec), "field \"depth\" must be a whole number >= 0");
  spec.settings.set("depth", std::uint64_t{1} << 40);
  EXPECT_EQ(broken_rule(spec), "field \"depth\" is out of range");
  spec = {};
  spec.settings.set("msize", std::uint64_t{64});
  EXPECT_EQ(broken_rule(spec), "field \"msize\" is not a setting of the stream workload");
}

TEST(Layouts, WhoSendsOnEachConnection) {
  DirectionLayout bidir = DirectionLayout::of(spec::Direction::bidir, 3);
  EXPECT_EQ(bidir.total(), 6u);
  EXPECT_TRUE(bidir.sends_on(Side::client, 2));
  EXPECT_FALSE(bidir.sends_on(Side::client, 3));
  EXPECT_TRUE(bidir.sends_on(Side::server, 3));
  EXPECT_EQ(bidir.index_in_direction(4), 1u);
  EXPECT_EQ(bidir.connections(false), (std::vector<std::uint32_t>{3, 4, 5}));
  DirectionLayout slots{4, 0, /*client_sends_forward=*/false};  // transfers: the server sends
  EXPECT_TRUE(slots.sends(Side::server, true));
  EXPECT_FALSE(slots.sends(Side::client, true));
  EXPECT_FALSE(DirectionLayout::of(spec::Direction::reverse, 2).live_forward());
}

}  // namespace
}  // namespace testio::workloads
