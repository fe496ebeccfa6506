#include "mesh/schedule.hpp"

#include <algorithm>

namespace testio::mesh {
namespace {

// The circle method of a round-robin tournament: rank n-1 stays put while the others turn, so
// each of the n-1 rounds pairs every rank once and every two ranks meet in exactly one round. An
// odd count gets a phantom rank; whoever meets it sits the round out.
std::vector<Round> tournament(std::uint32_t ranks) {
  const std::uint32_t n = ranks % 2 ? ranks + 1 : ranks;
  std::vector<Round> result;
  for (std::uint32_t r = 0; r + 1 < n; ++r) {
    Round round;
    auto meet = [&](std::uint32_t a, std::uint32_t b) {
      if (a < ranks && b < ranks) round.push_back({std::min(a, b), std::max(a, b)});
    };
    meet(n - 1, r);
    for (std::uint32_t i = 1; i < n / 2; ++i) meet((r + i) % (n - 1), (r + n - 1 - i) % (n - 1));
    result.push_back(std::move(round));
  }
  return result;
}

// Each edge into the first round where neither of its ranks is busy yet.
std::vector<Round> greedy(const std::vector<Pair>& edges) {
  std::vector<Round> result;
  for (const Pair& edge : edges) {
    auto free_in = [&](const Round& round) {
      return std::none_of(round.begin(), round.end(), [&](const Pair& p) {
        return p.from == edge.from || p.to == edge.from || p.from == edge.to || p.to == edge.to;
      });
    };
    auto slot = std::find_if(result.begin(), result.end(), free_in);
    if (slot == result.end()) result.emplace_back(1, edge);
    else slot->push_back(edge);
  }
  return result;
}

}  // namespace

std::optional<Schedule> parse_schedule(std::string_view name) {
  if (name == "all") return Schedule::all;
  if (name == "pairs") return Schedule::pairs;
  if (name == "ring") return Schedule::ring;
  return std::nullopt;
}

const char* to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::all: return "all";
    case Schedule::pairs: return "pairs";
    case Schedule::ring: return "ring";
  }
  return "all";
}

std::vector<Round> rounds(std::uint32_t ranks, Schedule schedule) {
  if (ranks < 2) return {};
  if (schedule == Schedule::ring) {
    std::vector<Pair> edges;
    for (std::uint32_t i = 0; i < ranks; ++i)
      if (ranks > 2 || i == 0) edges.push_back({i, (i + 1) % ranks});
    if (ranks == 2) edges.push_back({1, 0});
    return greedy(edges);
  }
  std::vector<Round> result = tournament(ranks);
  if (schedule == Schedule::pairs) return result;
  // Every round once each way: the meetings of round r, then the same ones reversed.
  std::vector<Round> both;
  for (const Round& round : result) {
    both.push_back(round);
    Round reversed;
    for (const Pair& pair : round) reversed.push_back({pair.to, pair.from});
    both.push_back(std::move(reversed));
  }
  return both;
}

}  // namespace testio::mesh
