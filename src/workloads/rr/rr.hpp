// Request/response ("rr"): the client keeps spec.rr.depth messages of spec.rr.message_size bytes
// outstanding on each connection and times each echo; the server echoes. Reports messages/s and
// latency percentiles.
#pragma once

#include <memory>

#include "workloads/workload.hpp"

namespace testio::workloads::rr {

const Workload& workload();

// The client's side alone, for --raw --rr against any plain echo server.
std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec);

}  // namespace testio::workloads::rr
