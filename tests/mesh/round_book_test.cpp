// Rank 0's book of rounds: only a rank's own pairs are kept, what cannot be read or never came
// fails with the reason, a lost rank's pairs say so, each pair reaches --mesh-results as a line.
// And a fleet on paper: 512 ranks' `all` schedule (1,022 rounds, 261,632 pairs) fed through the
// book as the ranks would send it, without MPI, to bound rank 0's memory (asserted, generously)
// and to print its parse time per round (not asserted: docs/mesh.md quotes it).
#include "mesh/round_book.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace testio::mesh {
namespace {

std::string address(std::uint32_t rank) { return "198.18.0.1" + std::to_string(rank); }

// A pair as a rank sends it; `report` stands for the pair's testio report.
nlohmann::ordered_json pair_json(std::uint32_t from, std::uint32_t to, const nlohmann::ordered_json& report) {
  PairResult pair;
  pair.from = from, pair.to = to, pair.from_address = address(from), pair.to_address = address(to);
  pair.ok = true, pair.bits_per_second = 9.4e9, pair.sent_bytes = pair.received_bytes = 11'750'000'000;
  if (!report.is_null()) pair.report = std::make_shared<const nlohmann::ordered_json>(report);
  return to_json(pair);
}

std::string message(std::size_t round, std::initializer_list<nlohmann::ordered_json> pairs) {
  return round_message(round, nlohmann::ordered_json(pairs).dump());
}

std::vector<Host> hosts(std::uint32_t ranks) {
  std::vector<Host> all(ranks);
  for (std::uint32_t rank = 0; rank < ranks; ++rank) all[rank].rank = rank, all[rank].address = address(rank);
  return all;
}

TEST(RoundBook, KeepsEachRanksOwnPairsAndWritesThemAsLines) {
  std::ostringstream results;
  RoundBook book(3, &results, 1 << 20);
  EXPECT_EQ(book.take(0, message(0, {pair_json(0, 1, {{"end", 1}})})), 0u);
  EXPECT_EQ(book.take(1, message(0, {pair_json(0, 2, nullptr)})), 0u);  // rank 1 cannot report rank 0's pair
  const std::vector<PairResult> pairs = std::move(book).collect({{Pair{0, 1}}, {Pair{0, 2}}}, hosts(3));
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_TRUE(pairs[0].ok);
  EXPECT_EQ(pairs[0].report->at("end"), 1);
  EXPECT_FALSE(pairs[1].ok);
  EXPECT_EQ(pairs[1].reason, "rank 0 sent no result for it");
  const auto line = nlohmann::json::parse(results.str().substr(0, results.str().find('\n')));
  EXPECT_EQ(line["round"], 1);
  EXPECT_EQ(line["from"], 0);
  EXPECT_EQ(line["to"], 1);
}

TEST(RoundBook, WhatCannotBeReadOrNeverCameFailsWithTheReason) {
  RoundBook book(4, nullptr, 0);
  EXPECT_FALSE(book.take(1, "no round here"));
  EXPECT_EQ(book.take(2, "3\n[not json"), 3u);
  book.lose(3, 4, "it said nothing for 10 s");
  const std::vector<PairResult> pairs = std::move(book).collect({{Pair{1, 0}, Pair{2, 3}}, {Pair{3, 0}}}, hosts(4));
  EXPECT_EQ(pairs[0].reason, "rank 1 sent a message without its round");
  EXPECT_EQ(pairs[1].reason, "rank 2 sent the pairs are not a JSON array");
  EXPECT_EQ(pairs[2].reason, "rank 3 was lost in round 5: it said nothing for 10 s");
  EXPECT_EQ(book.lost(3), "lost in round 5: it said nothing for 10 s");
  EXPECT_EQ(pairs[2].to_address, address(0));
}

TEST(RoundBook, PastItsBudgetOnlyTheLinesCarryTheReports) {
  std::ostringstream results;
  const std::string first = message(0, {pair_json(0, 1, {{"end", 1}})});
  RoundBook book(3, &results, first.size() + 10);
  book.take(0, first);
  EXPECT_FALSE(book.reports_dropped());
  book.take(1, message(0, {pair_json(1, 2, {{"end", 2}})}));  // past the budget: every report goes
  EXPECT_TRUE(book.reports_dropped());
  const std::vector<PairResult> pairs = std::move(book).collect({{Pair{0, 1}, Pair{1, 2}}}, hosts(3));
  EXPECT_TRUE(pairs[0].ok && !pairs[0].report && !pairs[1].report);
  EXPECT_NE(results.str().find(R"("report":{"end":1})"), std::string::npos);
  EXPECT_NE(results.str().find(R"("report":{"end":2})"), std::string::npos);
}

std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

// 512 ranks (fewer under the sanitizers, whose every allocation costs many times more).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::uint32_t kFleet = 128;
#else
constexpr std::uint32_t kFleet = 512;
#endif

TEST(RoundBook, AFleetOf512RanksFitsRankZero) {
  const std::vector<Round> plan = rounds(kFleet, Schedule::all);
  // A pair's report as rank 0 would get it, trimmed to its end figures: a fleet's full reports
  // (15 KB and more each at -t 10) pass the book's budget and go to --mesh-results only.
  const nlohmann::ordered_json report = {{"end", {{"sum_received", {{"bytes", 11'750'000'000}, {"seconds", 10}}}}}};
  const std::size_t before = resident_bytes();
  RoundBook book(kFleet, nullptr, 0);
  double slowest_round_s = 0, all_s = 0;
  std::size_t pairs = 0;
  for (std::size_t r = 0; r < plan.size(); ++r) {
    std::vector<std::string> messages(kFleet, round_message(r, "[]"));
    for (const Pair& pair : plan[r]) messages[pair.from] = message(r, {pair_json(pair.from, pair.to, report)});
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t rank = 0; rank < kFleet; ++rank) ASSERT_EQ(book.take(rank, messages[rank]), r);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slowest_round_s = std::max(slowest_round_s, took), all_s += took, pairs += plan[r].size();
  }
  EXPECT_EQ(book.pairs_kept(), pairs);
  const std::vector<PairResult> collected = std::move(book).collect(plan, hosts(kFleet));
  const std::size_t grown = resident_bytes() - before;
  EXPECT_EQ(collected.size(), std::size_t{kFleet} * (kFleet - 1));
  for (const PairResult& pair : collected) ASSERT_TRUE(pair.ok);
  std::printf("%u ranks: %zu pairs in %zu rounds; rank 0 took %.1f ms a round (slowest %.1f ms), %.1f s in all; "
              "book and report grew VmRSS by %.0f MiB\n",
              kFleet, pairs, plan.size(), all_s / plan.size() * 1e3, slowest_round_s * 1e3, all_s, grown / 1048576.0);
  EXPECT_LT(grown, std::size_t{512} << 20) << "rank 0 needs " << grown / 1048576 << " MiB for " << kFleet << " ranks";
}

}  // namespace
}  // namespace testio::mesh
