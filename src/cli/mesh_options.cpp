// Mesh: every pair of a fleet's MPI ranks (mpirun ... testio --mesh).
#include "cli/groups.hpp"

#include "mesh/schedule.hpp"
#include "mesh/world.hpp"

namespace testio::cli {

using util::UsageError;

void add_mesh_options(OptionTable& options) {
  // clang-format off
  options.add_options("Mesh")
    ("mesh", "Under mpirun: each rank serves on its -B address, then the test runs between every pair of ranks "
             "in rounds; rank 0 prints one report (docs/mesh.md)")
    ("mesh-schedule", "Which pairs: all (every ordered pair), pairs (each pair once, the lower rank the client), "
                      "ring (each rank to the next: a quick pass)", value(), "SCHEDULE")
    ("mesh-slow", "Name the hosts that sent less than this share of the median host",
       value(), "FRACTION")
    ("mesh-results", "Rank 0 appends each round's pairs to FILE as JSON lines as they arrive, so a run cut "
                     "short (a rank that died) keeps every round it finished", value(), "FILE");
  // clang-format on
}

void fill_mesh(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  config.mesh = given.mesh = args.count("mesh") > 0;
  given.mesh_options = args.count("mesh-schedule") > 0 || args.count("mesh-slow") > 0 || args.count("mesh-results") > 0;
  if (auto results = typed(args, "mesh-results")) {
    if (results->empty()) throw UsageError("--mesh-results needs a file name");
    config.mesh_results = *results;
  }
  if (auto schedule = typed(args, "mesh-schedule")) {
    if (!mesh::parse_schedule(*schedule))
      throw UsageError("--mesh-schedule '" + *schedule + "' is not one of all, pairs, ring");
    config.mesh_schedule = *schedule;
  }
  if (auto slow = typed(args, "mesh-slow")) {
    char* end = nullptr;
    config.mesh_slow_fraction = std::strtod(slow->c_str(), &end);
    if (end == slow->c_str() || *end || !(config.mesh_slow_fraction > 0 && config.mesh_slow_fraction < 1))
      throw UsageError("--mesh-slow '" + *slow + "' is not a fraction between 0 and 1 (e.g. 0.8)");
  }
}

void check_mesh(const config::Config& config, const GivenOptions& given) {
  if (!given.mesh) {
    if (given.mesh_options) throw UsageError("--mesh-schedule and --mesh-slow apply to --mesh");
    if (config.bind_address.find("{rank}") != std::string::npos)
      throw UsageError("-B's {rank} is the MPI rank of --mesh; give an address");
    return;
  }
  if (!mesh::World::available())
    throw UsageError("this testio was built without MPI, so --mesh cannot run: apt-get install libopenmpi-dev "
                     "openmpi-bin, then build it again (meson finds MPI by itself)");
  if (given.server || given.client)
    throw UsageError("--mesh runs a server and clients on every rank itself; leave out -s and -c");
  if (config.raw || config.iperf3 || given.transfers || given.urls || given.prometheus || given.file || given.metrics)
    throw UsageError("--mesh runs testio's bulk, -u and --rr tests; --raw, --iperf3, --transfers, URLs, -F, "
                     "--metrics and --prometheus are for one pair");
}

}  // namespace testio::cli
