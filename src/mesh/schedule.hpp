// --mesh's schedule: which ordered pairs of ranks test in which round. Rounds run one after
// another; inside a round no rank is in two tests, so no host sends or serves twice at once and
// every pair's figure is that pair's alone. Plain arithmetic, no MPI: tests/mesh simulates 512 ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace testio::mesh {

// all: every ordered pair (a to b and b to a), 2(K-1) rounds for even K, 2K for odd.
// pairs: every unordered pair once, the lower rank as the client: K-1 rounds (K odd: K).
// ring: each rank to the next (K-1 to 0), a quick pass: 2 rounds (3 for odd K).
enum class Schedule { all, pairs, ring };

std::optional<Schedule> parse_schedule(std::string_view name);
const char* to_string(Schedule schedule);

struct Pair {
  std::uint32_t from = 0;  // the client: it connects, and sends unless -R
  std::uint32_t to = 0;    // the server
  bool operator==(const Pair&) const = default;
};
using Round = std::vector<Pair>;

std::vector<Round> rounds(std::uint32_t ranks, Schedule schedule);

}  // namespace testio::mesh
