// `mpirun ... testio --mesh [options] [N]`: what each rank does. It starts testio's server on its
// own address as a child process, tells every other rank where it listens (MPI_Allgather), then
// runs the schedule's rounds as rank 0 says (rounds.hpp): in a round a rank is the client of at
// most one pair, run as a child `testio -c` with the test as a profile and a deadline, and reports
// the round's pairs to rank 0, which prints the one report. Owner: the main thread; MPI is used
// from it alone.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace testio::mesh {

// The exit code: 0 when every pair ran and agreed, 1 otherwise (on rank 0; the others return 0
// unless they could not take part). `binary` runs the children (this testio).
int run_mesh(const config::Config& config, const std::string& binary);

// -B with {rank} replaced by `rank` ("127.0.1.1{rank}" -> "127.0.1.12").
std::string address_of_rank(const std::string& pattern, std::uint32_t rank);

}  // namespace testio::mesh
