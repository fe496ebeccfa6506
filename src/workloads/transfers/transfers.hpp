// Connection per transfer ("transfers"): --transfers COUNT downloads of --size bytes, N at a time,
// each on a fresh connection (or, with --reuse, on the connection its slot already has). The
// server sends; the client times each connect and each transfer.
#pragma once

#include <cstdint>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::transfers {

const Workload& workload();

// Its part of the spec (workloads/part.hpp), which HTTP downloads take too.
struct TransfersSpec {
  std::uint64_t count = 0;  // --transfers: downloads, `connections` at a time
  std::uint64_t size = 0;   // --size: bytes each
  bool reuse = false;       // --reuse: keep each connection for the next transfer

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("transfers", part.count);
    visit("transfer_size", part.size);
    visit("reuse", part.reuse);
  }
};

// Its options group (transfers_options.cpp): --transfers, downloads from any HTTP server
// (-c URL, --urls), and where they are saved.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

}  // namespace testio::workloads::transfers
