// What one side saw of its connections and its host over a test, for the verdict on what limited
// it (diagnosis/verdict.hpp): each stream's TCP_INFO at the end, each thread's CPU, the TcpExt
// counters that say where received data was dropped, and the egress qdisc. Taken twice per test
// (begin and finish), never per call or per interval. Owner: the control thread of that side; a
// testio peer sends its own in the results.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "net/nic_counters.hpp"
#include "net/tcp_ext.hpp"
#include "net/tcp_info.hpp"
#include "stats/interval.hpp"
#include "stats/thread_cpu.hpp"

namespace testio::stats {

// One stream at its end: TCP_INFO's cumulative figures, and how often its delivery-rate samples
// were app-limited over the intervals (the end's own flag says only that the sender stopped).
struct StreamEnd {
  net::TcpInfo tcp;
  double app_limited_share = 0;  // 0..1 of the intervals with a valid sample
};

// The egress qdisc at the root of the device the first stream leaves by, over the test.
struct QdiscDelta {
  std::string device;             // empty: not read (no route, no netlink)
  std::string kind;               // "tbf", "htb", "noqueue"...
  std::uint64_t drops = 0;        // dropped during the test
  std::uint64_t overlimits = 0;   // held back by a shaper during the test
  std::uint64_t backlog_bytes = 0;  // queued at the end
};

// The drop counters of that device over the test: on the receiver, frames its NIC had no room for.
struct NicDropDelta {
  std::string device;  // empty: not read (no device, or its counters could not be read)
  net::NicDrops drops;
};

// The TcpExt counters whose deltas show a receiver dropping or pruning what arrived.
inline constexpr const char* kReceiveDropCounters[] = {
    "TCPRcvQDrop", "TCPBacklogDrop", "PruneCalled", "RcvPruned", "TCPOFODrop", "TCPZeroWindowDrop",
    "ListenOverflows"};
// ... and the one that shows a receiver's window closing: its application did not read in time.
inline constexpr const char* kZeroWindowCounter = "TCPToZeroWindowAdv";
inline constexpr std::size_t kEvidenceCounters = std::size(kReceiveDropCounters) + 1;

// At most this many threads are kept (busiest first) or accepted from a peer.
inline constexpr std::size_t kMaxEvidenceThreads = 64;

struct SideEvidence {
  std::vector<std::uint32_t> cpus;    // the CPUs this process may run on; empty: no evidence was taken
  std::vector<StreamEnd> streams;     // per stream, in stream order
  std::vector<ThreadCpu> threads;     // CPU-seconds of each thread over the test, busiest first
  std::vector<net::NamedCounter> tcp_ext;  // deltas of the counters above this kernel has
  std::vector<std::string> missing;   // the counters above it lacks
  QdiscDelta qdisc;
  NicDropDelta nic;

  bool present() const noexcept { return !cpus.empty(); }
};

// The host's side of the evidence, read at the start and again at the end of a test. Not for
// hot paths: a few files under /proc and one netlink dump each time.
class EvidenceWatch {
 public:
  // `device`: the interface the first stream leaves by ("" or "unknown": no qdisc is read).
  void begin(const std::string& device);
  // The deltas since begin(), with `streams` as they ended.
  SideEvidence finish(std::vector<StreamEnd> streams) const;

 private:
  std::vector<ThreadTicks> threads_;
  std::vector<net::NamedCounter> tcp_ext_;
  std::string device_;
  std::uint32_t qdisc_drops_ = 0, qdisc_overlimits_ = 0;  // the kernel's 32-bit counters at begin()
  bool qdisc_read_ = false;
  std::optional<net::NicDrops> nic_drops_;  // the device's drop counters at begin()
};

// The share of `intervals`' valid TCP samples of stream `stream` that were app-limited.
double app_limited_share(const std::vector<IntervalRecord>& intervals, std::size_t stream) noexcept;

}  // namespace testio::stats
