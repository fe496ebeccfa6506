#include "mesh/round_book.hpp"

#include <charconv>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace testio::mesh {

std::string round_message(std::size_t round, const std::string& pairs_json) {
  return std::to_string(round) + "\n" + pairs_json;
}

RoundBook::RoundBook(std::uint32_t ranks, std::ostream* results, std::size_t report_budget)
    : ranks_(ranks), results_(results), report_budget_(report_budget), problems_(ranks), lost_(ranks) {}

std::optional<std::size_t> RoundBook::take(std::uint32_t rank, std::string_view message) {
  const std::size_t newline = message.find('\n');
  std::size_t round = 0;
  const char* end = message.data() + (newline == std::string_view::npos ? 0 : newline);
  if (newline == std::string_view::npos || std::from_chars(message.data(), end, round).ptr != end) {
    problems_[rank] = "a message without its round";
    return std::nullopt;
  }
  report_bytes_ += message.size();
  if (!reports_dropped_ && report_bytes_ > report_budget_) {
    reports_dropped_ = true;
    for (auto& [ranks, kept] : pairs_) kept.report = nullptr;
  }
  try {
    for (PairResult& pair : parse_pairs(message.substr(newline + 1), ranks_)) {
      if (pair.from != rank) throw std::invalid_argument("a pair of rank " + std::to_string(pair.from) + "'s");
      if (results_) {
        nlohmann::ordered_json line = {{"round", round + 1}};
        line.update(to_json(pair));
        *results_ << line.dump() << '\n';
      }
      if (reports_dropped_) pair.report = nullptr;
      pairs_[{pair.from, pair.to}] = std::move(pair);
    }
  } catch (const std::invalid_argument& error) {
    problems_[rank] = error.what();
  }
  if (results_) results_->flush();
  return round;
}

void RoundBook::lose(std::uint32_t rank, std::size_t round, std::string why) {
  lost_[rank] = "lost in round " + std::to_string(round + 1) + ": " + std::move(why);
}

std::vector<PairResult> RoundBook::collect(const std::vector<Round>& plan, const std::vector<Host>& hosts) && {
  std::vector<PairResult> pairs;
  for (const Round& round : plan)
    for (const Pair& scheduled : round) {
      if (const auto found = pairs_.find({scheduled.from, scheduled.to}); found != pairs_.end()) {
        pairs.push_back(std::move(found->second));
        continue;
      }
      PairResult pair;
      pair.from = scheduled.from, pair.to = scheduled.to;
      pair.from_address = hosts[pair.from].address, pair.to_address = hosts[pair.to].address;
      const std::string rank = "rank " + std::to_string(pair.from);
      pair.reason = !lost_[pair.from].empty()    ? rank + " was " + lost_[pair.from]
                    : !problems_[pair.from].empty() ? rank + " sent " + problems_[pair.from]
                                                    : rank + " sent no result for it";
      pairs.push_back(std::move(pair));
    }
  return pairs;
}

}  // namespace testio::mesh
