// What rank 0 reads from the other ranks: a pair's ranks and counts must be integers in range,
// whatever number a rank (or a fuzzer) writes in their place.
#include "mesh/pair_result.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace testio::mesh {
namespace {

std::string pair_with(const std::string& from, const std::string& sent_bytes = "5") {
  return R"([{"from":)" + from + R"(,"to":1,"from_address":"a","to_address":"b","ok":true,"reason":"",)" +
         R"("bits_per_second":1.5,"sent_bytes":)" + sent_bytes + R"(,"received_bytes":5,"retransmits":0,"report":{}}])";
}

TEST(GatheredPairs, AWellFormedPairIsRead) {
  const std::vector<PairResult> pairs = parse_pairs(pair_with("0"), 4);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].from, 0u);
  EXPECT_EQ(pairs[0].to, 1u);
  EXPECT_EQ(pairs[0].sent_bytes, 5u);
}

TEST(GatheredPairs, RanksAndCountsThatAreNoCountsAreRefused) {
  // A float far beyond uint32 once reached nlohmann's conversion, which is undefined (UBSan).
  for (const std::string from : {"4.4e92", "-1", "1.5", "4294967296", "\"0\""})
    EXPECT_THROW(parse_pairs(pair_with(from), 4), std::invalid_argument) << from;
  EXPECT_THROW(parse_pairs(pair_with("0", "1e30"), 4), std::invalid_argument);
  EXPECT_THROW(parse_pairs(pair_with("0", "-5"), 4), std::invalid_argument);
}

}  // namespace
}  // namespace testio::mesh
