// The rounds in step, on messages that never wait past a limit instead of MPI collectives (a
// collective with a dead rank in it never returns). Rank 0 conducts: it tells the living ranks
// "round R, and these ranks are lost", runs its own pairs, and waits for every living rank's
// round_message(); while a rank's pair runs it says "alive" each second, and a rank silent for
// the silence limit, or without its report at the round's limit, is lost (its process died under
// mpirun --enable-recovery, or it hangs) and the rounds go on without it. After the last
// round rank 0 says "end" to every rank, so no server stops while a test may still run against
// it. The others follow: wait for the word, run their pairs, report. Owner: the main thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mesh/round_book.hpp"
#include "mesh/schedule.hpp"
#include "mesh/world.hpp"

namespace testio::mesh {

// This rank's pairs of round R (0-based) as a JSON array, given which ranks are lost; `alive` is
// to be called about once a second while a pair runs.
using RunRound =
    std::function<std::string(std::size_t round, const std::vector<bool>& lost, const std::function<void()>& alive)>;

struct RoundLimits {
  double round_s = 0;    // a rank's report of a round, from the round's start
  double silence_s = 0;  // a rank heard nothing from this long is lost (0: only the round's limit)
};

struct RoundsEnd {
  bool to_the_end = true;  // false: rank 0 fell silent (a sentence on stderr said so)
  bool any_lost = false;   // a rank was lost on the way
};

// Rank 0.
RoundsEnd conduct_rounds(World& world, const std::vector<Round>& plan, RoundBook& book, const RunRound& run_mine,
                         RoundLimits limits);

// Any other rank. Not to the end when rank 0 said nothing for longer than it could take to finish
// a round (rank 0 died or hangs, or counted this rank lost).
RoundsEnd follow_rounds(World& world, const std::vector<Round>& plan, const RunRound& run_mine, double round_limit_s);

}  // namespace testio::mesh
