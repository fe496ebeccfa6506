// libFuzzer target: what rank 0 reads from the other ranks over MPI, the hosts' records and each
// rank's pairs. Neither parser may crash, hang or leak; what they accept names ranks in range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "mesh/pair_result.hpp"

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
  return 0;
}
