// Rank 0's one report of a mesh: the K x K matrix of goodput, each host's totals in and out, the
// slowest pairs, the hosts below the median, the failed pairs with their reasons; as text, or as
// one JSON document (mesh.pairs[] with each pair's full testio report, mesh.hosts[]).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "mesh/pair_result.hpp"
#include "mesh/schedule.hpp"

namespace testio::mesh {

struct MeshRun {
  Schedule schedule = Schedule::all;
  std::size_t rounds = 0;
  std::string test;             // what each pair ran, as the user typed it ("2 connections, 3 s")
  bool reverse = false;         // -R: the data went server to client
  double slow_fraction = 0.8;   // a host below this fraction of the median is named
  std::vector<Host> hosts;
  std::vector<PairResult> pairs;
};

// Per host: what its pairs moved out of it and into it (bits/s summed over its pairs' tests).
struct HostTotals {
  double out_bits_per_second = 0, in_bits_per_second = 0;
  std::uint64_t sent_bytes = 0, received_bytes = 0;
  std::uint32_t failed_pairs = 0;
};
std::vector<HostTotals> host_totals(const MeshRun& run);

std::string mesh_text(const MeshRun& run);
nlohmann::ordered_json mesh_json(const MeshRun& run);
// True when every pair of the schedule ran and its client exited 0 (its counts agreed).
bool mesh_succeeded(const MeshRun& run);

}  // namespace testio::mesh
