// Rank 0's book of a mesh's rounds: every pair the ranks reported, as each round's messages
// arrive, appended to --mesh-results as JSON lines (flushed, so a run cut short keeps every round
// it finished), and the ranks that were lost on the way. Plain data, no MPI: tests/mesh feeds it
// 512 ranks' rounds to bound rank 0's memory and time. Owner: rank 0's main thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mesh/pair_result.hpp"
#include "mesh/schedule.hpp"

namespace testio::mesh {

// What a rank sends rank 0 after a round: "ROUND\n" and its pairs as a JSON array.
std::string round_message(std::size_t round, const std::string& pairs_json);

class RoundBook {
 public:
  // `results` (may be null) receives each pair as a line. The book keeps the pairs' full reports
  // while their text stays within `report_budget` bytes, and past it drops every one (the report
  // then carries figures only, the same for every pair): a fleet's reports do not fit in memory
  // (512 ranks' `all` is 261,632 pairs of 15-70 KB each, and parsed they take 3-4 times that).
  RoundBook(std::uint32_t ranks, std::ostream* results, std::size_t report_budget);

  // One rank's round_message(). A pair is kept only where `rank` is its client; text that cannot
  // be read is noted against the rank (it fails the pairs it did not report). The round the
  // message named, when it could be read.
  std::optional<std::size_t> take(std::uint32_t rank, std::string_view message);
  // `rank` answered nothing for `round` (0-based): its later pairs, and the others' toward it, fail.
  void lose(std::uint32_t rank, std::size_t round, std::string why);
  const std::string& lost(std::uint32_t rank) const { return lost_[rank]; }

  // Every scheduled pair: as its client reported it, or failed with why nothing came. Moves the
  // pairs out: the book is spent.
  std::vector<PairResult> collect(const std::vector<Round>& plan, const std::vector<Host>& hosts) &&;
  std::size_t pairs_kept() const { return pairs_.size(); }
  bool reports_dropped() const { return reports_dropped_; }

 private:
  std::uint32_t ranks_;
  std::ostream* results_;
  std::size_t report_budget_;
  std::size_t report_bytes_ = 0;  // the kept reports' text, as sent
  bool reports_dropped_ = false;
  std::map<std::pair<std::uint32_t, std::uint32_t>, PairResult> pairs_;  // by (from, to)
  std::vector<std::string> problems_;  // per rank: why what it sent could not be read
  std::vector<std::string> lost_;      // per rank: why it is no longer in the rounds
};

}  // namespace testio::mesh
