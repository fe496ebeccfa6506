// Everything a reporter needs about one test, as plain values. Reporters never touch a socket;
// the lifecycles fill these and hand them over.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/flow_path.hpp"
#include "report/section.hpp"
#include "spec/test_spec.hpp"
#include "stats/histogram.hpp"
#include "stats/core_spread.hpp"
#include "stats/interval.hpp"
#include "stats/peer_clock.hpp"
#include "stats/side_evidence.hpp"
#include "stats/summary.hpp"
#include "report/verdict.hpp"

namespace testio::report {

struct StreamEndpoints {
  std::string local_host;
  std::uint16_t local_port = 0;
  std::string remote_host;
  std::uint16_t remote_port = 0;
};

// Known once the data connections are up, before any data moves.
struct StartInfo {
  spec::TestSpec spec;              // the test as agreed; send_mode as used (zerocopy may fall back)
  bool from_client = true;
  bool local_is_sender = true;      // in the direction this report covers
  std::string peer;                 // "127.0.0.1:5201"
  std::string connecting_host;      // what the user typed after -c
  std::uint16_t connecting_port = 0;
  std::vector<StreamEndpoints> connected;
  unsigned client_threads = 0;
  unsigned server_threads = 0;      // 0 when the peer is plain
  std::string peer_version;         // a testio peer's version, as it said in its accept; empty: not said
  std::string peer_protocol;        // what a peer that is not testio speaks ("plain TCP", "HTTP"); the peer says
  // What only the workload can say, in its words (its TestSide::describe_start() fills them):
  std::string extent;               // what ends the test ("1000 transfers of 6 MiB ..."); empty: -t or -n
  std::string manner;               // how each connection runs ("request/response of 1 KiB, depth 1");
                                    // empty: the bulk streams' calls, modes and engine
  std::uint64_t call_size = 0;      // what one call moves when the workload says (rr's --msize); 0: -l
  bool datagrams = false;           // the flows carry datagrams (UDP): loss and jitter instead of retransmits,
                                    // and a sender's and receiver's counts differ by the loss
  stats::PeerClock peer_clock;      // client: how the two clocks relate (UDP's one-way delays)
  // Read back from the first data connection: what the kernel granted.
  std::uint64_t sndbuf_actual = 0;
  std::uint64_t rcvbuf_actual = 0;
  std::uint32_t mss = 0;
  bool no_delay = false;            // TCP_NODELAY
  double fq_rate_bps = 0;           // SO_MAX_PACING_RATE, bits/s; 0 = none
  std::string bind_device;          // SO_BINDTODEVICE
  // What only the client asks for on its own sockets.
  std::uint32_t mss_requested = 0;  // -M (the MSS in use is `mss`)
  std::uint16_t cport_first = 0, cport_last = 0;  // --cport
  // --spread even: the flows the client asked to leave by each interface (empty: not spread).
  std::vector<std::pair<std::string, std::uint32_t>> spread_asked;
  std::vector<std::uint32_t> server_cpus;  // where the server's workers are pinned (-A)
  std::int64_t timestamp = 0;       // Unix seconds at the start

  std::uint32_t connections() const noexcept { return spec.connections; }
  // The peer speaks no testio (--raw, HTTP) and sends no figures.
  bool plain_peer() const noexcept { return !peer_protocol.empty(); }
  // A test both ways (--bidir), reported one direction at a time.
  bool bidir() const noexcept { return spec.direction == spec::Direction::bidir; }
  // -F: the digest both sides compute ("" for none).
  std::string hash() const { return spec.hash == util::HashKind::none ? "" : std::string(util::to_string(spec.hash)); }
  bool tuned() const noexcept {
    return !bind_device.empty() || !spec.congestion.empty() || mss_requested || no_delay || !spec.cpus.empty() ||
           !server_cpus.empty() || cport_first || !spread_asked.empty() || spec.rate_bps > 0 || fq_rate_bps > 0;
  }
};

// What one side measured: totals over the whole test (omitted part included), its intervals, CPU.
struct SideReport {
  bool present = false;
  std::vector<stats::StreamFigures> totals;
  std::vector<stats::IntervalRecord> intervals;
  stats::CpuTimes cpu;
  double wall_s = 0;
  std::string congestion;
  std::vector<stats::CoreShare> cores;  // each CPU's busy and softirq share over the test
  std::string nics_reason;              // --iface-stats: why these NICs
  std::vector<net::FlowPath> paths;     // per stream, the interface it leaves this side by (may be empty)
  std::vector<int> incoming_cpus;       // per stream, the CPU its packets were processed on; -1 unknown
  std::vector<int> worker_cpus;         // --rx-affinity follow: per stream, its worker's CPU; -1 none
  std::vector<int> mptcp_subflows;      // --mptcp: per stream, its subflows at the end (0: plain TCP); may be empty
  // Per stream, the retransmits a peer that sends no TCP_INFO samples counted itself (an iperf3
  // sender's "retransmits"); -1 unknown. Empty for testio's peers, whose intervals carry them.
  std::vector<std::int64_t> told_retransmits;
  stats::SideEvidence evidence;         // what the verdict reads; absent (not present()) from a plain peer
};

// -F: each stream's digest on both sides, as the client compares them.
struct DigestCheck {
  std::string hash;                     // "sha1", "sha256"
  std::vector<std::string> sent;
  std::vector<std::string> received;
  bool matches() const noexcept { return !sent.empty() && sent == received; }
};

struct TestReport {
  StartInfo start;
  SideReport sender;
  SideReport receiver;
  // Streams whose sender and receiver totals differ; each is a lost or invented byte.
  std::vector<std::uint32_t> mismatched_streams;
  std::uint32_t tests_beside = 0;   // the most other tests the server ran at the same time
  // Each workload's own part (request/response latencies, transfer tallies), told by itself.
  std::vector<std::shared_ptr<const Section>> sections;
  DigestCheck digests;                  // present when digests.hash is set
  // Set when the test ended early (the peer vanished, a signal): the figures cover the time run.
  bool incomplete = false;
  std::string ended_because;
  // --bidir: the report above is the forward direction (client to server); this one is the
  // reverse, with the intervals of the side reporting, shown after it.
  std::shared_ptr<const TestReport> bidir_reverse;
  // A composed test: the report above is its first workload's; these are the others', in order,
  // each with its own start, intervals and figures.
  std::vector<TestReport> with;
  bool composed = false;                // one of several workloads in one test (this one or a `with`)
  // Bytes the rest of the test moved over the same time: the other direction of --bidir, the other
  // workloads of a composed test. Each side's CPU covers them too, so its cost per GB counts them.
  std::uint64_t other_bytes = 0;
  // --get-server-output toward an iperf3 server: what it sent as its own output (its JSON document,
  // or its text). Empty for testio's server, whose side the client tells from its figures.
  std::string server_output_json;
  std::string server_output_text;
  // What limited each direction (diagnosis::diagnose), filled before the reporters' end().
  std::vector<Verdict> diagnosis;
  // --diagnose: the variations run after the test, in order.
  std::vector<Variation> variations;

  const SideReport& local() const noexcept { return start.local_is_sender ? sender : receiver; }
  // The section of type T, for the workload that made it; null when there is none.
  template <typename T>
  const T* section() const noexcept {
    for (const std::shared_ptr<const Section>& each : sections)
      if (const T* found = dynamic_cast<const T*>(each.get())) return found;
    return nullptr;
  }
  const SideReport& remote() const noexcept { return start.local_is_sender ? receiver : sender; }
  // Calls `visit` with each section of this report and of its `with` whose figures are the whole
  // test's (Section::whole_test()).
  template <typename Visit>
  void whole_test_sections(Visit&& visit) const {
    for (const auto& section : sections)
      if (section->whole_test()) visit(*section);
    for (const TestReport& part : with)
      for (const auto& section : part.sections)
        if (section->whole_test()) visit(*section);
  }
};

// Figures for the summary: totals less the omitted intervals of the same side.
inline std::vector<stats::StreamFigures> summary_figures(const SideReport& side) {
  return stats::excluding_omitted(side.totals, side.intervals);
}

}  // namespace testio::report
