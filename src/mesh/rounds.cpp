#include "mesh/rounds.hpp"

#include <chrono>
#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

namespace testio::mesh {
namespace {

constexpr int kGoTag = 1;        // rank 0 to a rank: "ROUND LOST..."; ROUND == the rounds' count is the end
constexpr int kFromRankTag = 2;  // a rank to rank 0: round_message(), or kAlive while its pair runs
constexpr const char* kAlive = "alive";
constexpr double kSendLimit_s = 10;  // for a short message to be taken by a living rank's MPI

std::string go_message(std::size_t round, const std::vector<bool>& lost) {
  std::string text = std::to_string(round);
  for (std::size_t rank = 0; rank < lost.size(); ++rank)
    if (lost[rank]) text.append(1, ' ').append(std::to_string(rank));
  return text;
}

// Rank 0's word: the round and the lost ranks, or nothing when it cannot be read.
std::optional<std::size_t> read_go(const std::string& text, std::vector<bool>& lost) {
  std::istringstream words(text);
  std::size_t round = 0, rank = 0;
  if (!(words >> round)) return std::nullopt;
  while (words >> rank)
    if (rank < lost.size()) lost[rank] = true;
  return round;
}

using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void lose(RoundBook& book, std::vector<bool>& lost, std::uint32_t rank, std::size_t round, const std::string& why) {
  lost[rank] = true;
  book.lose(rank, round, why);
  std::cerr << "testio: rank " << rank << " is lost in round " << round + 1 << ": " << why
            << "; the rounds go on without it\n";
}

// Rank 0 waits for every living rank's report of `round`; the silent ones are lost.
void await_reports(World& world, std::size_t round, RoundBook& book, std::vector<bool>& lost, RoundLimits limits) {
  const Clock::time_point round_end = after(limits.round_s);
  std::map<std::uint32_t, Clock::time_point> waiting;  // rank -> when its silence ends it
  for (std::uint32_t rank = 1; rank < lost.size(); ++rank)
    if (!lost[rank]) waiting[rank] = limits.silence_s > 0 ? std::min(round_end, after(limits.silence_s)) : round_end;
  while (!waiting.empty()) {
    Clock::time_point next = round_end;
    for (const auto& [rank, silence_end] : waiting) next = std::min(next, silence_end);
    const std::optional<World::Message> message = world.receive(kFromRankTag, std::nullopt, seconds_left(next));
    if (message && message->text == kAlive) {
      const auto found = waiting.find(message->from);
      if (found != waiting.end() && limits.silence_s > 0) found->second = std::min(round_end, after(limits.silence_s));
    } else if (message) {
      const std::optional<std::size_t> said = book.take(message->from, message->text);
      if (!said || *said == round) waiting.erase(message->from);  // an earlier round's late report only adds to the book
    }
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (Clock::now() < it->second) {
        ++it;
        continue;
      }
      const bool silent = it->second < round_end;
      lose(book, lost, it->first, round,
           silent ? "it said nothing for " + std::to_string(static_cast<int>(limits.silence_s)) +
                        " s (its testio died or hangs)"
                  : "it sent no report within the round's " + std::to_string(static_cast<int>(limits.round_s)) + " s");
      it = waiting.erase(it);
    }
  }
}

}  // namespace

RoundsEnd conduct_rounds(World& world, const std::vector<Round>& plan, RoundBook& book, const RunRound& run_mine,
                         RoundLimits limits) {
  std::vector<bool> lost(world.size(), false);
  for (std::size_t round = 0; round < plan.size(); ++round) {
    const std::string go = go_message(round, lost);
    for (std::uint32_t rank = 1; rank < world.size(); ++rank)
      if (!lost[rank]) world.send(rank, kGoTag, go, kSendLimit_s);  // one that does not take it sends nothing back
    book.take(0, round_message(round, run_mine(round, lost, [] {})));
    await_reports(world, round, book, lost, limits);
  }
  // Every rank, the lost too: one that was only slow stops its server now rather than at its own limit.
  const std::string end = go_message(plan.size(), lost);
  for (std::uint32_t rank = 1; rank < world.size(); ++rank) world.send(rank, kGoTag, end, lost[rank] ? 1 : kSendLimit_s);
  return {true, std::find(lost.begin(), lost.end(), true) != lost.end()};
}

RoundsEnd follow_rounds(World& world, const std::vector<Round>& plan, const RunRound& run_mine, double round_limit_s) {
  // Rank 0 may run a pair of its own (within a round's limit) and then wait a round's limit for
  // the others before it speaks again.
  const double wait_s = 2 * round_limit_s + 30;
  std::vector<bool> lost(world.size(), false);
  for (;;) {
    const std::optional<World::Message> go = world.receive(kGoTag, 0, wait_s);
    const std::optional<std::size_t> round = go ? read_go(go->text, lost) : std::nullopt;
    if (!round) {
      std::cerr << "testio: rank " << world.rank() << " heard nothing from rank 0 for " << static_cast<int>(wait_s)
                << " s (it died, hangs, or counted this rank lost); leaving the mesh\n";
      return {false, true};
    }
    if (*round >= plan.size()) return {true, std::find(lost.begin(), lost.end(), true) != lost.end()};
    const auto alive = [&world] { world.send(0, kFromRankTag, kAlive, 1); };
    // Rank 0 takes it once its own pair of the round is over: a long report waits that long.
    world.send(0, kFromRankTag, round_message(*round, run_mine(*round, lost, alive)), round_limit_s + kSendLimit_s);
  }
}

}  // namespace testio::mesh
