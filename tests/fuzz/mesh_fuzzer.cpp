// libFuzzer target: what rank 0 reads from the other ranks over MPI, the hosts' records and each
// rank's round messages (a round number and its pairs). No parser may crash, hang or leak; what
// they accept names ranks in range, and the book keeps only the sending rank's own pairs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "mesh/pair_result.hpp"
#include "mesh/round_book.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace testio::mesh;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::uint32_t kRanks = 8;
  try {
    Host host = decode_host(bytes, 3);
    if (host.rank != 3 || host.address.empty()) std::abort();
    if (decode_host(encode_host(host), 3).address != host.address) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    for (const PairResult& pair : parse_pairs(bytes, kRanks))
      if (pair.from >= kRanks || pair.to >= kRanks || pair.from == pair.to) std::abort();
  } catch (const std::invalid_argument&) {
  }
  RoundBook book(kRanks, nullptr, 1 << 20);
  book.take(5, bytes);
  for (const PairResult& pair : std::move(book).collect(rounds(kRanks, Schedule::all), std::vector<Host>(kRanks)))
    if (pair.ok && pair.from != 5) std::abort();
  return 0;
}
