// Latency under load ("latency"): probes of up to three kinds (a UDP echo, a message on a kept TCP
// connection, a new TCP connection each), run beside the workloads that make the load in one
// composed test, each load placed in the window as a phase (idle, download, upload, bidir).
// Its report section is the whole test's: each phase's probes, the load's own RTT and goodput.
// docs/latency.md.
#pragma once

#include <cstdint>
#include <vector>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "workloads/latency/probe_log.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::latency {

const Workload& workload();

// Its part of the spec (workloads/part.hpp).
struct LatencySpec {
  std::uint64_t interval_us = 10'000;           // --latency-interval: between udp and tcp probes
  std::uint64_t connect_interval_us = 100'000;  // between connect probes (10 intervals)
  std::uint64_t probe_size = 72;                // --latency-size: bytes per udp and tcp probe
  bool udp = true, tcp = true, connect = true;  // --latency-kinds

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("interval_us", part.interval_us);
    visit("connect_interval_us", part.connect_interval_us);
    visit("probe_size", part.probe_size);
    visit("udp", part.udp);
    visit("tcp", part.tcp);
    visit("connect", part.connect);
  }
};

// The kinds a spec's probes run, in the order of their connections.
std::vector<ProbeKind> kinds_of(const LatencySpec& latency);

// Its options group (latency_options.cpp): --latency and its phases, which build the composed test.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

}  // namespace testio::workloads::latency
