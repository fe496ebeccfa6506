// Every probe one stream took, in the order it took them: when it was sent (on the test's clock)
// and what it measured. One writer (the probe's worker) appends without a lock or an allocation;
// the control thread reads what has been published (the live intervals) and, once the workers have
// stopped, all of it (the phases of the report). The room is sized once, before the test starts;
// probes beyond it are counted, not kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace testio::workloads::latency {

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

}  // namespace testio::workloads::latency
