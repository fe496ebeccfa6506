// Request/response ("rr"): the client keeps spec.rr.depth messages of spec.rr.message_size bytes
// outstanding on each connection and times each echo; the server echoes. Reports messages/s and
// latency percentiles.
#pragma once

#include <memory>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rr {

const Workload& workload();

// Its options group (rr_options.cpp): --rr and what it sends.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

// The client's side alone, for --raw --rr against any plain echo server.
std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec);

}  // namespace testio::workloads::rr
