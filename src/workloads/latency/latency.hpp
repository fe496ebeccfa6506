// Latency under load ("latency"): probes of up to three kinds (a UDP echo, a message on a kept TCP
// connection, a new TCP connection each), run beside the workloads that make the load in one
// composed test, each load placed in the window as a phase (idle, download, upload, bidir).
// Its report section is the whole test's: each phase's probes, the load's own RTT and goodput.
// docs/latency.md.
// Its options, rules and probe datagram (latency.cpp), its probes and sides (latency_streams.cpp)
// and its phases and report sections (latency_section.cpp) share this one header.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stats/histogram.hpp"
#include "stats/peer_clock.hpp"
#include "workloads/forward.hpp"

namespace testio::workloads::latency {

// Every probe one stream took, in the order it took them: when it was sent (on the test's clock)
// and what it measured. One writer (the probe's worker) appends without a lock or an allocation;
// the control thread reads what has been published (the live intervals) and, once the workers have
// stopped, all of it (the phases of the report). The room is sized once, before the test starts;
// probes beyond it are counted, not kept.

// How a probe measures (docs/latency.md).
enum class ProbeKind : std::uint8_t {
  udp,      // a datagram echoed by the server: round trip, and one-way delays on the peer clock
  tcp,      // a message echoed on a connection kept for the test
  connect,  // a new connection per probe: its handshake, then the first response
  load,     // the load connections' own RTT from TCP_INFO at each interval (not a stream of its own)
};
inline constexpr std::size_t kProbeKinds = 4;
const char* name(ProbeKind kind) noexcept;

struct ProbeRecord {
  std::int64_t sent_ns = 0;    // since the test's start (the client's clock)
  std::uint64_t rtt_ns = 0;    // the round trip; for a connect probe, connect to first response
  std::uint64_t up_ns = 0;     // udp: client to server; connect: the handshake alone
  std::uint64_t down_ns = 0;   // udp: server to client
  bool answered = false;       // false: lost (udp: never echoed; tcp, connect: failed or timed out)
};

class ProbeLog {
 public:
  explicit ProbeLog(std::size_t capacity)
      : records_(std::make_unique<ProbeRecord[]>(capacity)), capacity_(capacity) {}

  // Writer only.
  void add(const ProbeRecord& record) noexcept {
    const std::size_t at = size_.load(std::memory_order_relaxed);
    if (at == capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    records_[at] = record;
    size_.store(at + 1, std::memory_order_release);
  }

  // Any thread: the records published so far are [0, size()).
  std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }
  const ProbeRecord& operator[](std::size_t i) const noexcept { return records_[i]; }
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<ProbeRecord[]> records_;
  std::size_t capacity_;
  std::atomic<std::size_t> size_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

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

// Its options group (latency.cpp): --latency and its phases, which build the composed test.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

// A UDP latency probe as it travels (latency.cpp): testio's datagram header (udp/udp.hpp, so a
// capture reads it as any testio flow's), then the four times of a round trip and the client's
// estimate of the clocks' offset, which lets the server tell its one-way delay up too. All
// big-endian:
//
//   0  header         32 bytes  sequence = the probe's number from 0; stream and test id
//   32 sent_ns        u64  the client's CLOCK_REALTIME at send
//   40 sent_mono_ns   u64  the client's steady clock at send, since its test started (echoed back)
//   48 received_ns    u64  the server's CLOCK_REALTIME when the probe arrived; 0 on the way out
//   56 replied_ns     u64  the server's CLOCK_REALTIME when it sent the echo; 0 on the way out
//   64 offset_ns      i64  the server's clock less the client's, as the client estimated it
//   72 (padding to --latency-size)
//
// Pure functions; any thread. read_probe() takes untrusted bytes (fuzzed).
inline constexpr std::size_t kProbeSize = 72;  // the smallest probe: header and times

struct ProbeTimes {
  std::uint64_t sequence = 0;
  std::uint64_t sent_ns = 0;
  std::uint64_t sent_mono_ns = 0;
  std::uint64_t received_ns = 0;
  std::uint64_t replied_ns = 0;
  std::int64_t offset_ns = 0;
};

// Writes a probe of flow `stream` of test `test_id` at `out` (kProbeSize bytes).
void write_probe(const ProbeTimes& times, std::uint64_t test_id, std::uint32_t stream, unsigned char* out) noexcept;
// The server's stamps, written into a probe it is about to echo.
void stamp_reply(std::uint64_t received_ns, std::uint64_t replied_ns, unsigned char* probe) noexcept;
// A probe of flow `stream` of test `test_id`; nullopt for anything else (too short, another
// test's or flow's, not a probe).
std::optional<ProbeTimes> read_probe(const unsigned char* data, std::size_t size, std::uint64_t test_id,
                                     std::uint32_t stream) noexcept;

// The sides (latency_streams.cpp): the client's probes, the server's answers.
std::unique_ptr<TestSide> client_probes(const config::Config& config, const spec::TestSpec& spec);
std::unique_ptr<TestSide> server_answers(const spec::TestSpec& spec);

// Latency under load's phases and their figures (latency_section.cpp). A phase is a stretch of the
// window in which the same load runs (none: idle; the server sending: download; the client: upload;
// both: bidir),
// found from where each of the test's other workloads runs (begins_s, ends_s). Each probe kind's
// round trips in a phase give its percentiles, the draft's trimmed mean and RPM. Pure functions
// and plain values; the control thread.
struct Phase {
  std::string name;                 // idle, download, upload, bidir
  double begins_s = 0, ends_s = 0;  // from the window's start
  std::vector<std::size_t> loads;   // the test's workloads (0: the first) that run through it
  double seconds() const noexcept { return ends_s - begins_s; }
};

// The phases of `test` (a composed test's first spec; the latency workload is among its parts).
std::vector<Phase> phases_of(const spec::TestSpec& test);

// One set of delays (ns), as the report tells them.
struct DelayFigures {
  std::uint64_t count = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  double trimmed_mean_ms = 0;  // the mean of the lowest 95% (draft-ietf-ippm-responsiveness)
  std::array<double, stats::kCdfPercents.size()> cdf_ms{};  // at each of stats::kCdfPercents
  // Round trips per minute: 60,000 over the trimmed mean in ms; 0 without samples.
  double rpm() const noexcept { return trimmed_mean_ms > 0 ? 60'000.0 / trimmed_mean_ms : 0; }
};
// Sorts `delays_ns` in place.
DelayFigures delay_figures(std::vector<std::uint64_t>& delays_ns);

// One probe kind in one phase.
struct KindFigures {
  std::uint64_t sent = 0;          // probes due (udp: sent or due while the flow could not open)
  std::uint64_t lost = 0;
  DelayFigures round_trip;
  DelayFigures up, down;           // udp: one-way; connect: `up` is the handshake alone
};

// The probes of `records` sent within `phase`.
KindFigures kind_figures(ProbeKind kind, const std::vector<ProbeRecord>& records, const Phase& phase);
// The load connections' RTT from TCP_INFO: each sending stream's at each interval that ends within
// `phase`, of the workloads running through it (`test`: the first workload's report).
KindFigures load_rtt_figures(const report::TestReport& test, const Phase& phase);
// What the workloads running through `phase` received in it, bits per second: each one's
// intervals' bytes (shared out by the time they overlap it), or its totals over its span.
double phase_goodput_bps(const report::TestReport& test, const Phase& phase);

// Latency under load's part of a report (latency_section.cpp). The client's is the whole test's
// (Section::whole_test): per phase and per probe kind, count, loss, p50, p90, p99 and max, the idle
// baseline and what the load added, RPM, the phase's goodput and what the probes cost; in text, at
// JSON's end.latency (one entry per phase) and as metrics. The server's tells what it answered
// and, for UDP, the one-way delay up. Immutable once made; the control thread.

// What the probes were asked to do, as both sections tell it.
struct ProbePlan {
  double interval_ms = 10;           // udp and tcp probes
  double connect_interval_ms = 100;  // connect probes
  std::uint64_t size = 72;           // bytes per udp and tcp probe
  std::array<bool, 3> kinds{true, true, true};  // udp, tcp, connect
};

// The client's section: the probes' records by kind (udp, tcp, connect), split into `phases`.
std::shared_ptr<const report::Section> make_client_section(ProbePlan plan, std::vector<Phase> phases,
                                                           std::array<std::vector<ProbeRecord>, 3> records,
                                                           std::uint64_t dropped, stats::PeerClock clock);

// What the server answered. Plain figures, one per kind.
struct ServerProbes {
  ProbePlan plan;
  std::uint64_t udp_answered = 0;
  stats::LatencyHistogram udp_up_ns;
  std::uint64_t tcp_messages = 0;
  std::uint64_t connects = 0;
};

// The server's section.
std::shared_ptr<const report::Section> make_server_section(ServerProbes probes);

}  // namespace testio::workloads::latency
