// The mesh's schedule, simulated: every ordered (or unordered) pair exactly once, no rank in two
// tests of one round, and the round counts docs/mesh.md quotes, up to 512 ranks.
#include "mesh/schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace testio::mesh {
namespace {

void expect_disjoint(const std::vector<Round>& schedule, std::uint32_t ranks) {
  for (std::size_t r = 0; r < schedule.size(); ++r) {
    std::vector<int> busy(ranks, 0);
    for (const Pair& pair : schedule[r]) {
      ASSERT_LT(pair.from, ranks);
      ASSERT_LT(pair.to, ranks);
      ASSERT_NE(pair.from, pair.to);
      EXPECT_EQ(++busy[pair.from], 1) << "rank " << pair.from << " twice in round " << r;
      EXPECT_EQ(++busy[pair.to], 1) << "rank " << pair.to << " twice in round " << r;
    }
  }
}

std::multiset<std::pair<std::uint32_t, std::uint32_t>> pairs_of(const std::vector<Round>& schedule) {
  std::multiset<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (const Round& round : schedule)
    for (const Pair& pair : round) seen.insert({pair.from, pair.to});
  return seen;
}

TEST(MeshSchedule, AllHasEveryOrderedPairOnceInDisjointRounds) {
  for (std::uint32_t ranks : {2u, 3u, 4u, 5u, 8u, 9u, 64u, 512u}) {
    std::vector<Round> schedule = rounds(ranks, Schedule::all);
    expect_disjoint(schedule, ranks);
    auto seen = pairs_of(schedule);
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(ranks) * (ranks - 1)) << ranks;
    for (std::uint32_t a = 0; a < ranks; ++a)
      for (std::uint32_t b = 0; b < ranks; ++b)
        if (a != b) {
          ASSERT_EQ(seen.count({a, b}), 1u) << a << " to " << b << " of " << ranks;
        }
    EXPECT_EQ(schedule.size(), ranks % 2 ? 2u * ranks : 2u * (ranks - 1)) << ranks;
  }
}

TEST(MeshSchedule, PairsHasEveryUnorderedPairOnceLowerRankFirst) {
  for (std::uint32_t ranks : {2u, 7u, 512u}) {
    std::vector<Round> schedule = rounds(ranks, Schedule::pairs);
    expect_disjoint(schedule, ranks);
    auto seen = pairs_of(schedule);
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(ranks) * (ranks - 1) / 2);
    for (const auto& [from, to] : seen) EXPECT_LT(from, to);
    EXPECT_EQ(std::set(seen.begin(), seen.end()).size(), seen.size());
    EXPECT_EQ(schedule.size(), ranks % 2 ? ranks : ranks - 1u);
  }
}

TEST(MeshSchedule, RingIsEachRankToTheNextInTwoOrThreeRounds) {
  for (std::uint32_t ranks : {2u, 3u, 4u, 5u, 512u, 511u}) {
    std::vector<Round> schedule = rounds(ranks, Schedule::ring);
    expect_disjoint(schedule, ranks);
    auto seen = pairs_of(schedule);
    EXPECT_EQ(seen.size(), ranks);
    for (std::uint32_t i = 0; i < ranks; ++i) EXPECT_EQ(seen.count({i, (i + 1) % ranks}), 1u);
    EXPECT_EQ(schedule.size(), ranks == 2 ? 2u : ranks % 2 ? 3u : 2u) << ranks;
  }
}

TEST(MeshSchedule, NamesAndTheDegenerateMesh) {
  EXPECT_EQ(parse_schedule("ring"), Schedule::ring);
  EXPECT_EQ(parse_schedule("full"), std::nullopt);
  EXPECT_TRUE(rounds(1, Schedule::all).empty());
  EXPECT_TRUE(rounds(0, Schedule::ring).empty());
}

}  // namespace
}  // namespace testio::mesh
