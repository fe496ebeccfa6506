#include "diagnosis/verdict.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "stats/summary.hpp"

namespace testio::diagnosis {

namespace {

// The thresholds, and why each is where it is: docs/diagnosis.md ("Thresholds").
constexpr double kPacedReached = 0.90;      // goodput of what -b / --fq-rate asked for
constexpr double kSaturatedThread = 0.80;   // one thread's share of a core, running or waiting to run
constexpr double kBusyCpus = 0.90;          // a side's CPUs, mean busy share
constexpr double kRunningThere = 0.10;      // the side's own share of those CPUs, so it is among the load
constexpr double kWindowLimited = 0.50;     // rwnd-limited share of the sender's busy time
constexpr double kBufferLimited = 0.30;     // sndbuf-limited share of the sender's busy time
constexpr double kHotSoftirq = 0.50;        // one CPU's softirq share
constexpr double kRetransmitted = 0.001;    // retransmitted share of the bytes sent
constexpr double kRttInflated = 2.0;        // mean RTT over the minimum
constexpr double kRttInflatedFloorUs = 500; // ... and at least this far above it
constexpr double kCwndLimited = 0.60;       // cwnd-limited share of the busy time
constexpr double kQueued = 0.50;            // busy share of the streams' time: data was waiting
// In flight (goodput x RTT) over the congestion window: below this the cwnd had room, so the busy
// time the kernel counts as neither rwnd- nor sndbuf-limited was not spent waiting on it (a send
// buffer of 16 KB behind 8 ms of ACK queueing: 0.16-0.18; a tbf: 0.77-0.87; BBR keeps 2x BDP).
constexpr double kCwndRoom = 0.35;
// With the cwnd far from full, a window or send-buffer stall is the limit at a lower share: the
// kernel starts those clocks only at a transmit and stops them at the next ACK, so on a veth of
// some 30 us a 16 KB receive buffer showed 18-55% rwnd-limited, and a 16 KB send buffer 3-24%.
constexpr double kWindowLimitedRoomy = 0.15;
// A peer's window at most half the cwnd binds the flight whatever the chrono says: a 16 KB
// receive buffer behind 10 ms of ACK delay read 11 KB of window to a 26 KB cwnd (0.42), its
// cwnd_used 0.35-0.37 and 40-42% rwnd-limited on a quiet host; a tbf and loopback read 1 and more.
constexpr double kWindowUnderCwnd = 0.5;
constexpr double kBufferLimitedRoomy = 0.05;

// One side's CPU as the verdict sees it.
struct SideCpu {
  bool measured = false;
  double busiest_thread = 0;     // share of one core
  std::string busiest_name;
  double own_share = 0;          // this process's CPU over its usable CPUs
  double cpus_busy = 0;          // mean busy share of its usable CPUs (every process's load)
  std::uint32_t usable = 0;
  double hot_softirq = 0;        // the largest softirq share among its CPUs
  std::uint32_t hot_cpu = 0;
  double other_softirq = 0;      // the mean softirq share of the others
  std::uint64_t receive_drops = 0;  // TcpExt counters of data dropped or pruned on arrival
  std::uint64_t zero_windows = 0;   // windows this host advertised as zero
  std::size_t flow_cpus = 0;        // distinct CPUs its flows were received on (SO_INCOMING_CPU); 0 unknown
  bool flows_on_hot_cpu = false;    // every flow received on the CPU with the most softirq

  bool saturated() const noexcept {
    return busiest_thread >= kSaturatedThread || (cpus_busy >= kBusyCpus && own_share >= kRunningThere);
  }
  double saturation() const noexcept { return std::max(busiest_thread, own_share); }
};

// The sender's TCP_INFO over its streams.
struct SenderTcp {
  bool chrono = false;
  double busy_share = 0;      // of the streams' time, data was queued
  double rwnd_share = 0;      // of the busy time
  double sndbuf_share = 0;
  double cwnd_share = 0;
  double retrans_share = 0;
  double mean_rtt_us = 0, min_rtt_us = 0;
  std::uint64_t retransmits = 0;
  std::uint32_t last_snd_wnd = 0;  // the smallest window a peer advertised last, bytes; 0 unknown
  double cwnd_use = -1;            // in flight (acked rate x RTT) over cwnd, summed over streams; < 0 unknown
  double window_over_cwnd = -1;    // the peer's last advertised window over cwnd, summed; < 0 unknown
  bool cwnd_roomy() const noexcept { return cwnd_use >= 0 && cwnd_use < kCwndRoom; }
  // The peer's window, not the cwnd, bounded what could be in flight.
  bool window_bound() const noexcept { return window_over_cwnd >= 0 && window_over_cwnd <= kWindowUnderCwnd; }
};

struct Facts {
  Facts(const report::TestReport& test, SideCpu sender_cpu, SideCpu receiver_cpu, SenderTcp sender_tcp)
      : report(test), sender(std::move(sender_cpu)), receiver(std::move(receiver_cpu)), tcp(sender_tcp) {}
  const report::TestReport& report;
  SideCpu sender, receiver;
  SenderTcp tcp;
  double goodput_bps = 0;
  double asked_bps = 0;          // -b or --fq-rate over all connections; 0 unpaced
  std::uint32_t connections = 1;
  bool receiver_is_testio = false;
  stats::QdiscDelta qdisc;       // the sender's egress
  stats::NicDropDelta sender_nic, receiver_nic;  // the route's device on each side
  // Frames a NIC lost on the way: the receiver's had no room, or the sender's driver could not send.
  std::uint64_t nic_lost() const noexcept { return receiver_nic.drops.received_lost() + sender_nic.drops.tx_dropped; }
};

SideCpu side_cpu(const report::SideReport& side) {
  SideCpu cpu;
  const stats::SideEvidence& evidence = side.evidence;
  if (!side.present || !evidence.present() || side.wall_s <= 0) return cpu;
  cpu.measured = true;
  cpu.usable = static_cast<std::uint32_t>(evidence.cpus.size());
  // A thread's demand: the time it ran and the time it waited runnable for a CPU. A thread kept
  // off its CPU by others is as CPU-bound as one that ran all along.
  for (const stats::ThreadCpu& thread : evidence.threads) {
    double demand = std::min(1.0, (thread.cpu_s + thread.wait_s) / side.wall_s);
    if (demand > cpu.busiest_thread) cpu.busiest_thread = demand, cpu.busiest_name = thread.name;
  }
  cpu.own_share = (side.cpu.user_s + side.cpu.system_s) / side.wall_s / cpu.usable;
  double busy = 0, softirq_sum = 0;
  std::size_t counted = 0;
  for (const stats::CoreShare& core : side.cores) {
    if (std::find(evidence.cpus.begin(), evidence.cpus.end(), core.cpu) == evidence.cpus.end()) continue;
    busy += core.busy, softirq_sum += core.softirq, ++counted;
    if (core.softirq > cpu.hot_softirq) cpu.hot_softirq = core.softirq, cpu.hot_cpu = core.cpu;
  }
  if (counted) cpu.cpus_busy = busy / static_cast<double>(counted);
  if (counted > 1) cpu.other_softirq = (softirq_sum - cpu.hot_softirq) / static_cast<double>(counted - 1);
  std::vector<int> flow_cpus;
  for (int incoming : side.incoming_cpus)
    if (incoming >= 0 && std::find(flow_cpus.begin(), flow_cpus.end(), incoming) == flow_cpus.end())
      flow_cpus.push_back(incoming);
  cpu.flow_cpus = flow_cpus.size();
  cpu.flows_on_hot_cpu = flow_cpus.size() == 1 && static_cast<std::uint32_t>(flow_cpus.front()) == cpu.hot_cpu;
  for (const net::NamedCounter& counter : evidence.tcp_ext)
    if (counter.name == stats::kZeroWindowCounter)
      cpu.zero_windows += counter.value;
    else if (counter.name != "ListenOverflows")
      cpu.receive_drops += counter.value;
  return cpu;
}

SenderTcp sender_tcp(const report::SideReport& sender) {
  SenderTcp tcp;
  std::uint64_t busy = 0, rwnd = 0, sndbuf = 0, sent = 0, retransmitted = 0;
  double rtt_sum = 0, min_rtt = 0, stream_time_us = 0, flight = 0, cwnd = 0, window = 0, window_cwnd = 0;
  std::size_t rtt_count = 0;
  for (const stats::StreamEnd& stream : sender.evidence.streams) {
    const net::TcpInfo& info = stream.tcp;
    if (!info.valid) continue;
    if (info.chrono) tcp.chrono = true;
    busy += info.busy_us, rwnd += info.rwnd_limited_us, sndbuf += info.sndbuf_limited_us;
    sent += info.bytes_sent, retransmitted += info.bytes_retrans;
    if (info.min_rtt_us && (min_rtt == 0 || info.min_rtt_us < min_rtt)) min_rtt = info.min_rtt_us;
    if (info.snd_wnd && (tcp.last_snd_wnd == 0 || info.snd_wnd < tcp.last_snd_wnd)) tcp.last_snd_wnd = info.snd_wnd;
    stream_time_us += sender.wall_s * 1e6;
    if (info.snd_cwnd_bytes && info.rtt_us && sender.wall_s > 0) {
      flight += static_cast<double>(info.bytes_acked) / sender.wall_s * info.rtt_us / 1e6;
      cwnd += info.snd_cwnd_bytes;
    }
    if (info.snd_wnd && info.snd_cwnd_bytes) window += info.snd_wnd, window_cwnd += info.snd_cwnd_bytes;
  }
  if (cwnd > 0) tcp.cwnd_use = flight / cwnd;
  if (window_cwnd > 0) tcp.window_over_cwnd = window / window_cwnd;
  for (std::size_t i = 0; i < sender.totals.size(); ++i) {
    stats::TcpSummary summary = stats::tcp_summary(sender.intervals, i);
    if (!summary.valid) continue;
    rtt_sum += summary.mean_rtt_us, ++rtt_count;
    tcp.retransmits += summary.retransmits;
  }
  if (busy) {
    tcp.rwnd_share = static_cast<double>(rwnd) / static_cast<double>(busy);
    tcp.sndbuf_share = static_cast<double>(sndbuf) / static_cast<double>(busy);
    tcp.cwnd_share = std::max(0.0, 1.0 - tcp.rwnd_share - tcp.sndbuf_share);
  }
  if (stream_time_us > 0) tcp.busy_share = std::min(1.0, static_cast<double>(busy) / stream_time_us);
  if (sent) tcp.retrans_share = static_cast<double>(retransmitted) / static_cast<double>(sent);
  if (rtt_count) tcp.mean_rtt_us = rtt_sum / static_cast<double>(rtt_count);
  tcp.min_rtt_us = min_rtt;
  return tcp;
}

double goodput(const report::TestReport& report) {
  const report::SideReport& side = report.receiver.present ? report.receiver : report.sender;
  return stats::summarize(report::summary_figures(side)).bits_per_second;
}

Facts facts_of(const report::TestReport& report) {
  Facts facts(report, side_cpu(report.sender), side_cpu(report.receiver), sender_tcp(report.sender));
  facts.goodput_bps = goodput(report);
  const spec::TestSpec& spec = report.start.spec;
  facts.connections = std::max<std::uint32_t>(1, spec.connections);
  double per_connection = spec.rate_bps > 0 ? spec.rate_bps : 0;
  if (spec.fq_rate_bps > 0 && (per_connection == 0 || spec.fq_rate_bps < per_connection)) per_connection = spec.fq_rate_bps;
  facts.asked_bps = per_connection * facts.connections;
  facts.receiver_is_testio = report.receiver.present && report.receiver.evidence.present();
  facts.qdisc = report.sender.evidence.qdisc;
  facts.sender_nic = report.sender.evidence.nic;
  facts.receiver_nic = report.receiver.evidence.nic;
  return facts;
}

// What one limit's check found: whether it holds, how sure, and why (or why not).
struct Finding {
  explicit Finding(std::string limit_name) : limit(std::move(limit_name)) {}
  std::string limit;
  bool holds = false;
  double confidence = 0;
  std::string why;
  std::vector<report::NamedFigure> evidence;
  std::vector<std::string> advice;
};

double clamp01(double value) { return std::clamp(value, 0.0, 1.0); }
// Past a threshold, confidence grows from `floor` toward 0.95 as the figure nears `full`.
double sureness(double value, double threshold, double full, double floor = 0.6) {
  if (full <= threshold) return floor;
  return std::min(0.95, floor + (0.95 - floor) * clamp01((value - threshold) / (full - threshold)));
}
std::string percent(double share) { return fmt::format("{:.0f}%", share * 100); }
std::string gbits(double bps) { return fmt::format("{:.2f} Gbit/s", bps / 1e9); }

Finding rate_limit(const Facts& facts) {
  Finding finding("rate_limit");
  if (facts.asked_bps <= 0) {
    finding.why = "the test was not paced (no -b, no --fq-rate)";
    return finding;
  }
  double reached = facts.goodput_bps / facts.asked_bps;
  finding.evidence = {{"asked_rate", facts.asked_bps, "bit/s"}, {"goodput", facts.goodput_bps, "bit/s"}};
  if (reached < kPacedReached) {
    finding.why = fmt::format("paced to {} but moved {}: something else held it below the pace",
                              gbits(facts.asked_bps), gbits(facts.goodput_bps));
    return finding;
  }
  finding.holds = true;
  finding.confidence = 0.95;
  finding.why = fmt::format("the test was paced to {} on purpose and moved {} ({} of it)", gbits(facts.asked_bps),
                            gbits(facts.goodput_bps), percent(reached));
  finding.advice = {"Raise or drop -b / --fq-rate to measure what the path itself can carry."};
  return finding;
}

void add_cpu_evidence(Finding& finding, const SideCpu& cpu, const char* side) {
  std::string prefix(side);
  finding.evidence.push_back({prefix + "_busiest_thread", cpu.busiest_thread, "share of the time running or runnable"});
  finding.evidence.push_back({prefix + "_process_cpu", cpu.own_share, "share of its usable CPUs"});
  finding.evidence.push_back({prefix + "_cpus_busy", cpu.cpus_busy, "mean busy share of its usable CPUs"});
  finding.evidence.push_back({prefix + "_usable_cpus", static_cast<double>(cpu.usable), "CPUs"});
}

// A receiver whose softirq work lands on one CPU while others idle: RSS/RPS put every flow there.
Finding rx_softirq(const Facts& facts) {
  Finding finding("rx_softirq");
  const SideCpu& receiver = facts.receiver;
  if (!receiver.measured) {
    finding.why = "the receiver's CPUs were not measured (a peer that is not testio)";
    return finding;
  }
  finding.evidence = {{"receiver_hot_cpu", static_cast<double>(receiver.hot_cpu), "CPU number"},
                      {"receiver_hot_cpu_softirq", receiver.hot_softirq, "share of that CPU"},
                      {"receiver_other_cpus_softirq", receiver.other_softirq, "mean share of each other CPU"}};
  if (receiver.flow_cpus)
    finding.evidence.push_back({"receiver_flow_cpus", static_cast<double>(receiver.flow_cpus), "CPUs the flows arrived on"});
  // Hot and lopsided, or hot with every flow arriving there (SO_INCOMING_CPU) however busy the others.
  bool hot = receiver.hot_softirq >= kHotSoftirq && receiver.usable > 1 && facts.connections > 1;
  bool lopsided = hot && (receiver.hot_softirq >= 3 * receiver.other_softirq || receiver.flows_on_hot_cpu);
  if (!lopsided) {
    finding.why = fmt::format("no CPU of the receiver's spent half its time in softirq (the most: {} on CPU {})",
                              percent(receiver.hot_softirq), receiver.hot_cpu);
    return finding;
  }
  finding.holds = true;
  finding.confidence = sureness(receiver.hot_softirq, kHotSoftirq, 0.9);
  finding.why = fmt::format("CPU {} of the receiver spent {} of its time in softirq, the others {} on average{}: "
                            "every flow's receive work lands on one CPU",
                            receiver.hot_cpu, percent(receiver.hot_softirq), percent(receiver.other_softirq),
                            receiver.flows_on_hot_cpu ? ", and every flow arrived there" : "");
  finding.advice = {"Spread the receive queues: check `ethtool -l` and `ethtool -x` for RSS, or set RPS "
                    "(/sys/class/net/DEV/queues/rx-*/rps_cpus).",
                    "Use more connections so the flow hash has more to spread (-P)."};
  return finding;
}

// Per-connection ceilings: every connection is at its own CPU limit while the side has CPUs to spare.
Finding too_few_streams(const Facts& facts, const SideCpu& side, const char* side_name) {
  Finding finding("too_few_streams");
  bool spare = side.usable > facts.connections && side.cpus_busy < kBusyCpus - 0.1;
  if (!(side.busiest_thread >= kSaturatedThread && spare)) {
    finding.why = fmt::format("{} connections for {} usable CPUs, {} busy: no CPU to spare for more streams",
                              facts.connections, side.usable, percent(side.cpus_busy));
    return finding;
  }
  finding.holds = true;
  finding.confidence = sureness(side.busiest_thread, kSaturatedThread, 1.0, 0.55);
  finding.why = fmt::format("the {}'s busiest thread ({}) ran or waited to run {} of the time while its {} CPUs were {} busy: "
                            "{} connection(s) cannot use the CPUs this host has",
                            side_name, side.busiest_name, percent(side.busiest_thread), side.usable,
                            percent(side.cpus_busy), facts.connections);
  add_cpu_evidence(finding, side, side_name);
  finding.advice = {fmt::format("Use more connections (-P {}) and threads to match (-T).", side.usable),
                    "Run with --diagnose to try twice the connections."};
  return finding;
}


std::vector<std::string> cpu_advice(bool sender) {
  if (sender)
    return {"Give the sender more threads (-T) or CPUs (-A, taskset), or make each call cheaper: a larger -l, "
            "--send-mode zerocopy.",
            "Check what else runs on the sender's CPUs."};
  return {"Give the receiver more threads (-T) or CPUs; --recv-mode trunc shows the ceiling without the copy "
          "into user space.",
          "Check what else runs on the receiver's CPUs, and where its interrupts land."};
}

Finding cpu_limit(const Facts& facts, bool sender) {
  const SideCpu& side = sender ? facts.sender : facts.receiver;
  const char* name = sender ? "sender" : "receiver";
  Finding finding(sender ? "sender_cpu" : "receiver_cpu");
  if (!side.measured) {
    finding.why = fmt::format("the {}'s CPU was not measured (a peer that is not testio)", name);
    return finding;
  }
  add_cpu_evidence(finding, side, name);
  // A receiver that keeps its window open keeps up: busy as it may be, it is not the limit unless
  // it drops what arrives, or the sender (not testio) cannot say whether it waited on the window.
  if (!sender && side.saturated() && facts.tcp.chrono && side.receive_drops == 0) {
    finding.why = fmt::format("the receiver's busiest thread ran or waited to run {} of the time, yet kept its "
                              "window open (the sender waited on it {} of its busy time) and dropped nothing",
                              percent(side.busiest_thread), percent(facts.tcp.rwnd_share));
    return finding;
  }
  if (!side.saturated()) {
    finding.why = fmt::format("the {}'s busiest thread ran or waited to run {} of the time and its CPUs were {} busy", name,
                              percent(side.busiest_thread), percent(side.cpus_busy));
    return finding;
  }
  finding.holds = true;
  finding.confidence = sureness(side.saturation(), kSaturatedThread, 1.0);
  if (side.busiest_thread >= kSaturatedThread)
    finding.why = fmt::format("the {}'s busiest thread ({}) ran or waited to run {} of the time", name,
                              side.busiest_name, percent(side.busiest_thread));
  else
    finding.why = fmt::format("the {}'s {} usable CPUs were {} busy, {} of them testio's", name, side.usable,
                              percent(side.cpus_busy), percent(side.own_share));
  finding.advice = cpu_advice(sender);
  return finding;
}

// The sender waited on the peer's window: testio's receiver could not keep up (receiver_cpu), or
// its buffer is too small (receive_window), or a peer that is not testio does not read (peer_receiver).
Finding window_limit(const Facts& facts) {
  const SenderTcp& tcp = facts.tcp;
  const SideCpu& receiver = facts.receiver;
  bool starved = receiver.saturated() && (receiver.zero_windows >= facts.connections || receiver.receive_drops > 0);
  Finding finding(!facts.receiver_is_testio ? "peer_receiver" : starved ? "receiver_cpu" : "receive_window");
  if (!tcp.chrono) {
    finding.why = "the sender's TCP_INFO has no time accounting (tcpi_rwnd_limited: Linux 4.10 on, a testio sender)";
    return finding;
  }
  finding.evidence = {{"rwnd_limited", tcp.rwnd_share, "share of the sender's busy time"},
                      {"snd_wnd", static_cast<double>(tcp.last_snd_wnd), "bytes"},
};
  // What the kernel granted is read back on this side's sockets: the receiver's only when it is local.
  if (!facts.report.start.local_is_sender)
    finding.evidence.push_back({"receiver_buffer", static_cast<double>(facts.report.start.rcvbuf_actual), "bytes"});
  if (receiver.measured) {
    finding.evidence.push_back({"zero_windows", static_cast<double>(receiver.zero_windows), "advertisements"});
    add_cpu_evidence(finding, receiver, "receiver");
  }
  if (tcp.cwnd_use >= 0) finding.evidence.push_back({"cwnd_used", tcp.cwnd_use, "in flight over cwnd"});
  if (tcp.window_over_cwnd >= 0)
    finding.evidence.push_back({"window_over_cwnd", tcp.window_over_cwnd, "the peer's window over cwnd"});
  bool roomy = (tcp.cwnd_roomy() || tcp.window_bound()) && tcp.rwnd_share >= kWindowLimitedRoomy &&
               tcp.rwnd_share >= tcp.sndbuf_share;
  if (tcp.rwnd_share < kWindowLimited && !roomy) {
    finding.why = fmt::format("the sender waited on the receiver's window for {} of its busy time",
                              percent(tcp.rwnd_share));
    if (tcp.cwnd_use >= 0) finding.why += fmt::format(", with {} of its cwnd in flight", percent(tcp.cwnd_use));
    return finding;
  }
  finding.holds = true;
  finding.confidence = sureness(tcp.rwnd_share, kWindowLimited, 0.95);
  if (!facts.receiver_is_testio) {
    finding.why = fmt::format("the sender waited on the peer's window for {} of its busy time: the receiving "
                              "application does not read as fast as the path delivers", percent(tcp.rwnd_share));
    finding.advice = {"Look at the receiving application: how large its reads are, what it does between them, "
                      "and its socket buffer.",
                      "Compare with testio's own receiver (testio -s) to see what the path carries."};
  } else if (starved) {
    finding.why = fmt::format("the sender waited on the receiver's window for {} of its busy time, and the "
                              "receiver's busiest thread ({}) ran or waited to run {} of the time while its "
                              "window closed {} times: it could not read as fast as data came",
                              percent(tcp.rwnd_share), receiver.busiest_name, percent(receiver.busiest_thread),
                              receiver.zero_windows);
    finding.advice = cpu_advice(false);
  } else {
    finding.why = fmt::format("the sender waited on the receiver's window for {} of its busy time while the "
                              "receiver kept up with what arrived: its buffer is too small for the path",
                              percent(tcp.rwnd_share));
    finding.advice = {"Give the receiver a larger buffer (-w), or raise net.core.rmem_max and the third "
                      "figure of net.ipv4.tcp_rmem on the receiving host.",
                      "More connections (-P) each bring their own window."};
  }
  return finding;
}

Finding send_buffer(const Facts& facts) {
  const SenderTcp& tcp = facts.tcp;
  Finding finding("send_buffer");
  if (!tcp.chrono) {
    finding.why = "the sender's TCP_INFO has no time accounting (tcpi_sndbuf_limited)";
    return finding;
  }
  finding.evidence = {{"sndbuf_limited", tcp.sndbuf_share, "share of the sender's busy time"},
};
  if (facts.report.start.local_is_sender)
    finding.evidence.push_back({"send_buffer", static_cast<double>(facts.report.start.sndbuf_actual), "bytes"});
  if (tcp.cwnd_use >= 0) finding.evidence.push_back({"cwnd_used", tcp.cwnd_use, "in flight over cwnd"});
  // A roomy cwnd and a sender whose CPU had room: nothing but the buffer kept more in flight.
  bool roomy = tcp.cwnd_roomy() && tcp.sndbuf_share >= kBufferLimitedRoomy && !facts.sender.saturated();
  if (tcp.sndbuf_share < kBufferLimited && !roomy) {
    finding.why = fmt::format("the send buffer held the sender back for {} of its busy time", percent(tcp.sndbuf_share));
    if (tcp.cwnd_use >= 0) finding.why += fmt::format(", with {} of its cwnd in flight", percent(tcp.cwnd_use));
    return finding;
  }
  finding.holds = true;
  finding.confidence = sureness(tcp.sndbuf_share, kBufferLimited, 0.9);
  finding.why = fmt::format("the send buffer held the sender back for {} of its busy time: it is smaller than "
                            "what the path holds in flight", percent(tcp.sndbuf_share));
  finding.advice = {"Give the sender a larger buffer (-w), or raise net.core.wmem_max and the third figure of "
                    "net.ipv4.tcp_wmem on the sending host."};
  return finding;
}

Finding network(const Facts& facts) {
  const SenderTcp& tcp = facts.tcp;
  Finding finding("network");
  double inflation = tcp.min_rtt_us > 0 ? tcp.mean_rtt_us / tcp.min_rtt_us : 0;
  finding.evidence = {{"cwnd_limited", tcp.cwnd_share, "share of the sender's busy time"},
                      {"retransmitted", tcp.retrans_share, "share of the bytes sent"},
                      {"retransmits", static_cast<double>(tcp.retransmits), "segments"},
                      {"mean_rtt", tcp.mean_rtt_us, "us"},
                      {"min_rtt", tcp.min_rtt_us, "us"}};
  if (!facts.qdisc.device.empty()) {
    finding.evidence.push_back({"qdisc_drops", static_cast<double>(facts.qdisc.drops), "packets"});
    finding.evidence.push_back({"qdisc_backlog", static_cast<double>(facts.qdisc.backlog_bytes), "bytes"});
  }
  if (!facts.receiver_nic.device.empty())
    finding.evidence.push_back({"receiver_nic_drops", static_cast<double>(facts.receiver_nic.drops.received_lost()),
                                "frames (rx_dropped, rx_missed, rx_fifo)"});
  if (!facts.sender_nic.device.empty())
    finding.evidence.push_back({"sender_nic_tx_drops", static_cast<double>(facts.sender_nic.drops.tx_dropped), "frames"});
  bool lossy = tcp.retrans_share >= kRetransmitted || facts.qdisc.drops > 0 || facts.nic_lost() > 0;
  bool queueing = inflation >= kRttInflated && tcp.mean_rtt_us - tcp.min_rtt_us >= kRttInflatedFloorUs;
  bool shaped = facts.qdisc.overlimits > 0 || facts.qdisc.backlog_bytes > 0;
  bool waiting_on_cwnd = tcp.chrono ? tcp.cwnd_share >= kCwndLimited && tcp.busy_share >= kQueued : lossy;
  if (tcp.cwnd_use >= 0) finding.evidence.push_back({"cwnd_used", tcp.cwnd_use, "in flight over cwnd"});
  if (tcp.cwnd_roomy()) waiting_on_cwnd = false;  // what the kernel left as "cwnd" was not the cwnd
  if (!waiting_on_cwnd || !(lossy || queueing || shaped)) {
    finding.why = fmt::format("the sender was cwnd-limited for {} of its busy time, with {} retransmitted and a "
                              "mean RTT {:.1f}x the minimum", percent(tcp.cwnd_share), percent(tcp.retrans_share),
                              inflation);
    return finding;
  }
  finding.holds = true;
  finding.confidence = std::min(0.95, 0.6 + (lossy ? 0.15 : 0) + (queueing ? 0.1 : 0) + (shaped ? 0.1 : 0));
  std::string signs;
  if (lossy) signs += fmt::format(", {} of the bytes retransmitted", percent(tcp.retrans_share));
  if (queueing) signs += fmt::format(", the RTT {:.0f} us against a minimum of {:.0f} us", tcp.mean_rtt_us, tcp.min_rtt_us);
  if (shaped) signs += fmt::format(", the {} qdisc on {} holding {} bytes", facts.qdisc.kind, facts.qdisc.device,
                                   facts.qdisc.backlog_bytes);
  if (std::uint64_t lost = facts.receiver_nic.drops.received_lost(); lost > 0)
    signs += fmt::format(", {} frames dropped arriving at the receiver's {}", lost, facts.receiver_nic.device);
  if (std::uint64_t lost = facts.sender_nic.drops.tx_dropped; lost > 0)
    signs += fmt::format(", {} frames dropped leaving the sender's {}", lost, facts.sender_nic.device);
  finding.why = fmt::format("the sender waited on its congestion window for {} of its busy time{}: the path is "
                            "full", percent(tcp.cwnd_share), signs);
  finding.advice = {"Find the bottleneck along the path: the slowest link, a shaper or policer, a full queue "
                    "(`tc -s qdisc`, the switch's counters).",
                    "Compare congestion controls (-C bbr against cubic) if the loss is not from congestion."};
  if (facts.receiver_nic.drops.rx_missed + facts.receiver_nic.drops.rx_fifo > 0)
    finding.advice.push_back(fmt::format("The receiver's {} ran out of ring slots: a longer ring (ethtool -G {} rx N) "
                                         "or more queues spread over CPUs (ethtool -L, RSS).",
                                         facts.receiver_nic.device, facts.receiver_nic.device));
  return finding;
}

report::Verdict verdict_of(Finding chosen, std::string_view direction) {
  report::Verdict verdict;
  verdict.direction = std::string(direction);
  verdict.limit = chosen.limit;
  verdict.confidence = chosen.confidence;
  verdict.summary = std::move(chosen.why);
  verdict.evidence = std::move(chosen.evidence);
  verdict.advice = std::move(chosen.advice);
  return verdict;
}

// The checks in the order a limit explains the others: pacing on purpose first; then a closed
// window, which names the receiver whatever else is busy; the receiver's interrupts and the send
// buffer, which no CPU explains; then the CPUs, a saturated sender also emptying its queue; the
// path last, since a busy host's own queues look like a path's (docs/diagnosis.md, "Order").
std::vector<Finding> findings(const Facts& facts) {
  std::vector<Finding> all;
  all.push_back(rate_limit(facts));
  all.push_back(window_limit(facts));
  all.push_back(rx_softirq(facts));
  all.push_back(send_buffer(facts));
  bool receiver_first = facts.receiver.saturation() > facts.sender.saturation() && facts.receiver.saturated();
  const SideCpu& hotter = receiver_first ? facts.receiver : facts.sender;
  all.push_back(too_few_streams(facts, hotter, receiver_first ? "receiver" : "sender"));
  all.push_back(cpu_limit(facts, !receiver_first));
  all.push_back(cpu_limit(facts, receiver_first));
  all.push_back(network(facts));
  return all;
}

// Every limit of the vocabulary once: the first finding of each name (one that holds first), and
// a word for those no check could name here.
std::vector<Finding> one_of_each(std::vector<Finding> all, const Facts& facts) {
  std::vector<Finding> kept;
  for (Finding& finding : all) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Finding& each) { return each.limit == finding.limit; });
    if (same == kept.end()) kept.push_back(std::move(finding));
    else if (finding.holds && !same->holds) *same = std::move(finding);
  }
  for (std::string_view limit : kLimits) {
    if (limit == "unknown") continue;
    if (std::any_of(kept.begin(), kept.end(), [&](const Finding& each) { return each.limit == limit; })) continue;
    Finding absent{std::string(limit)};
    if (limit == "peer_receiver") absent.why = "the receiver is testio's, judged by its own figures";
    else if (limit == "receive_window" || limit == "receiver_cpu")
      absent.why = !facts.receiver_is_testio ? "the receiver is not testio's: its buffer and CPU are not known"
                   : facts.tcp.rwnd_share >= kWindowLimited ? "the window closed, but not for this reason"
                                                            : "the receiver's window stayed open";
    else absent.why = "no evidence of it";
    kept.push_back(std::move(absent));
  }
  return kept;
}

}  // namespace

report::Verdict judge(const report::TestReport& report, std::string_view direction) {
  const Facts facts = facts_of(report);
  std::vector<Finding> all = one_of_each(findings(facts), facts);
  auto chosen = std::find_if(all.begin(), all.end(), [](const Finding& finding) { return finding.holds; });
  report::Verdict verdict;
  const std::string chosen_limit = chosen == all.end() ? "unknown" : chosen->limit;
  if (chosen == all.end()) {
    Finding unknown("unknown");
    unknown.confidence = 0.3;
    unknown.why = "no limit's evidence held: no CPU saturated, no window or buffer stall, no loss or queue on the path";
    verdict = verdict_of(std::move(unknown), direction);
    verdict.advice = {"Run with --diagnose to try variations.", "Compare both ends' `ss -tim` during a run."};
    if (!facts.tcp.chrono && !facts.sender.measured)
      verdict.summary = "the sender is not testio and sent no figures, and the receiver's CPU had room";
  } else {
    verdict = verdict_of(std::move(*chosen), direction);
  }
  for (Finding& other : all)
    if (other.limit != chosen_limit && !(chosen != all.end() && &other == &*chosen))
      verdict.others.push_back({other.limit, other.holds ? "also held, explained by " + verdict.limit + ": " + other.why
                                                         : other.why});
  const report::SideReport& receiver = report.receiver;
  if (receiver.evidence.present()) verdict.missing = receiver.evidence.missing;
  // A testio sender on a kernel before 4.10 has TCP_INFO without its time accounting.
  if (report.sender.evidence.present() && !facts.tcp.chrono) verdict.missing.push_back("tcpi_busy_time");
  return verdict;
}

std::vector<report::Verdict> diagnose(const report::TestReport& report) {
  std::vector<report::Verdict> verdicts;
  bool reverse_only = report.start.spec.direction == spec::Direction::reverse;
  verdicts.push_back(judge(report, reverse_only ? "reverse" : "forward"));
  if (report.bidir_reverse) verdicts.push_back(judge(*report.bidir_reverse, "reverse"));
  return verdicts;
}

}  // namespace testio::diagnosis
