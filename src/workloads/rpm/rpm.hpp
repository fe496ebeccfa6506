// Responsiveness against any HTTP server ("rpm", `testio -c URL --rpm`), after the IETF draft
// (draft-ietf-ippm-responsiveness): HTTP/2 load connections through libcurl, added one a second
// until goodput is stable, and probe pairs meanwhile (a small GET on a new connection, its TCP,
// TLS and HTTP times apart, and one on the load connections); RPM from their trimmed means, with
// its confidence. Downloads, then uploads where the server takes them. docs/latency.md.
#pragma once

#include <cstdint>
#include <string>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rpm {

const Workload& workload();

// Its part of the spec (workloads/part.hpp). The large object's URL is -c's (or the one a
// /.well-known/nq configuration names).
struct RpmSpec {
  std::uint64_t max_seconds = 20;       // --rpm-time: each direction ends by then, stable or not
  std::uint64_t probes_per_second = 20; // --rpm-probes: probe pairs a second (at most 100)
  std::uint64_t max_connections = 16;   // load connections at most
  std::string small_url;                // --rpm-small: what the probes GET (default: the large URL, its first byte)
  std::string upload_url;               // --rpm-upload: where uploads go (none: downloads only)

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("max_seconds", part.max_seconds);
    visit("probes_per_second", part.probes_per_second);
    visit("max_connections", part.max_connections);
    visit("small_url", part.small_url);
    visit("upload_url", part.upload_url);
  }
};

void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

}  // namespace testio::workloads::rpm
