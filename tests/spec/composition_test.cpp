// Composed tests: a spec's "with" in its one JSON mapping, the fields its workloads share, and
// the rules a composition keeps beyond each workload's own.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spec/test_spec.hpp"

namespace testio::spec {
namespace {

// An 8-connection reverse bulk test with one request/response connection beside it.
TestSpec load_with_probe() {
  TestSpec test;
  test.connections = 8;
  test.direction = Direction::reverse;
  test.duration_s = 5;
  test.interval_s = 0.5;
  TestSpec probe;
  probe.workload = "rr";
  probe.settings.set("msize", std::uint64_t{64});
  share_test_wide(test, probe);
  test.with.push_back(probe);
  return test;
}

std::string broken_composition(const TestSpec& spec, const Limits& limits = {}) {
  try {
    check_composition(spec, limits);
  } catch (const SpecError& error) {
    return error.what();
  }
  return "";
}

TEST(Composition, WithRoundTripsOnTheWireAndInAReport) {
  const TestSpec test = load_with_probe();
  EXPECT_EQ(spec_from_json(to_json(test)), test);
  EXPECT_EQ(spec_from_json(to_json(test, Form::report)), test);
  // Each workload beside the first says only what differs, and none of the test-wide fields.
  const nlohmann::json with = to_json(test)["with"];
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0], nlohmann::json({{"workload", "rr"}, {"settings", {{"msize", 64}}}}));
  // A spec of one workload reads as it always has.
  EXPECT_FALSE(to_json(TestSpec{}).contains("with"));
}

TEST(Composition, AWorkloadBesideTakesTheTestsWindowAndMayNotSetItsOwn) {
  nlohmann::json json = to_json(load_with_probe());
  json["duration_s"] = 7;
  EXPECT_EQ(spec_from_json(json).with[0].duration_s, 7);
  json["with"][0]["interval_s"] = 2;
  EXPECT_THROW(spec_from_json(json), SpecError);
  json["with"][0].erase("interval_s");
  json["with"][0]["with"] = nlohmann::json::array({{{"workload", "rr"}}});
  EXPECT_THROW(spec_from_json(json), SpecError);
  json["with"] = "rr";
  EXPECT_THROW(spec_from_json(json), SpecError);
  json["with"] = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) json["with"].push_back({{"workload", "rr"}});
  EXPECT_THROW(spec_from_json(json), SpecError);  // more than kMaxWorkloads in all
}

TEST(Composition, WorkloadsOfSplitsAndComposedJoins) {
  const TestSpec test = load_with_probe();
  const std::vector<TestSpec> parts = workloads_of(test);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].with.empty());
  EXPECT_EQ(parts[0].connections, 8u);
  EXPECT_EQ(parts[1].workload, "rr");
  EXPECT_EQ(composed(parts), test);
  EXPECT_EQ(workloads_of(TestSpec{}).size(), 1u);
}

TEST(Composition, RulesBeyondEachWorkloadsOwn) {
  EXPECT_EQ(broken_composition(TestSpec{}), "");
  EXPECT_EQ(broken_composition(load_with_probe()), "");
  TestSpec counted = load_with_probe();
  counted.duration_s = 0;
  counted.total_bytes = 1000;
  share_test_wide(counted, counted.with[0]);
  EXPECT_NE(broken_composition(counted).find("only for a time"), std::string::npos);
  TestSpec own_window = load_with_probe();
  own_window.with[0].omit_s = 1;
  EXPECT_NE(broken_composition(own_window).find("are the test's"), std::string::npos);
  TestSpec nested = load_with_probe();
  nested.with[0].with.push_back(TestSpec{});
  EXPECT_NE(broken_composition(nested).find("lists workloads of its own"), std::string::npos);
  TestSpec many = load_with_probe();
  many.with.resize(kMaxWorkloads, many.with[0]);
  EXPECT_NE(broken_composition(many).find("at most 8"), std::string::npos);
  Limits limits;
  limits.max_connections = 8;  // the load alone fits, the probe beside it does not
  EXPECT_NE(broken_composition(load_with_probe(), limits).find("9 connections together"), std::string::npos);
}

}  // namespace
}  // namespace testio::spec
