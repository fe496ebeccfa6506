// Request/response ("rr"): the client keeps --depth messages of --msize bytes outstanding on each connection and times each echo; the server echoes. Reports messages/s and
// latency percentiles.
#pragma once

#include <cstdint>
#include <memory>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rr {

const Workload& workload();

// Its part of the spec (workloads/part.hpp).
struct RrSpec {
  std::uint64_t message_size = 1024;  // --msize: bytes per request and per echo
  std::uint32_t depth = 1;            // --depth: requests outstanding per connection
  std::uint64_t messages = 0;         // --num: requests per connection; 0 = for -t seconds

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("msize", part.message_size);
    visit("depth", part.depth);
    visit("messages", part.messages);
  }
};

// Its options group (rr_options.cpp): --rr and what it sends.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

// The client's side alone, for --raw --rr against any plain echo server.
std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec);

}  // namespace testio::workloads::rr
