// Per-stream cumulative counters. Owner: the worker thread that runs the stream writes them; any
// other thread (the sampler, the lifecycle after join) only reads. Single writer, so a relaxed
// load+store replaces a locked read-modify-write, and nothing ever resets them: readers subtract
// their own previous snapshot (resetting from a reader loses the bytes counted between two steps).
#pragma once

#include <atomic>
#include <cstdint>

namespace testio::stats {

// Nanoseconds on steady_clock since the test's start; -1 means "not yet".
using TestNanos = std::int64_t;

// The single writer's increment: no locked read-modify-write, since no one else writes.
inline void add_relaxed(std::atomic<std::uint64_t>& counter, std::uint64_t amount) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

// A UDP flow's datagram figures (issue 17): totals, or an interval's differences (jitter is the
// value at the interval's end either way). A sender counts only `datagrams`; a receiver its
// distinct datagrams, the sequence gaps (lost), late ones that filled a gap, repeats, the
// datagrams its own socket's full buffer dropped (SO_RXQ_OVFL), and strays (not this flow's).
// One-way delay of a flow's datagrams as its receiver saw them, in ns; all 0 when not measured.
struct DelayFigures {
  std::uint64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  bool any() const noexcept { return max_ns > 0; }
};

struct DatagramTally {
  std::uint64_t datagrams = 0;
  std::uint64_t lost = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t socket_drops = 0;
  std::uint64_t strays = 0;
  double jitter_s = 0;

  bool any() const noexcept { return datagrams || lost || strays || socket_drops; }
  // What changed since `earlier`; the jitter stays this one's.
  DatagramTally since(const DatagramTally& earlier) const noexcept {
    return {datagrams - earlier.datagrams, lost - earlier.lost, out_of_order - earlier.out_of_order,
            duplicates - earlier.duplicates, socket_drops - earlier.socket_drops, strays - earlier.strays, jitter_s};
  }
  DatagramTally& operator+=(const DatagramTally& other) noexcept {
    datagrams += other.datagrams;
    lost += other.lost;
    out_of_order += other.out_of_order;
    duplicates += other.duplicates;
    socket_drops += other.socket_drops;
    strays += other.strays;
    return *this;
  }
};

// Cache-line aligned (three lines since the receive zero-copy, datagram and delay figures):
// streams on different threads never share a line.
struct alignas(64) StreamCounters {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> calls{0};       // read or write system calls that moved data
  std::atomic<TestNanos> first_byte_ns{-1};
  std::atomic<TestNanos> last_byte_ns{-1};
  std::atomic<std::uint64_t> zerocopy_completed{0};  // --send-mode zerocopy: sends the kernel reported done
  std::atomic<std::uint64_t> zerocopy_copied{0};     // ... of which it copied after all
  // --recv-mode splice/mmap: bytes that never passed through a user buffer (spliced to /dev/null,
  // or mapped by TCP_ZEROCOPY_RECEIVE), and bytes that were copied into one (the mapping's
  // recv_skip_hint, or every byte when the mode fell back to recv_into).
  std::atomic<std::uint64_t> recv_zerocopy_bytes{0};
  std::atomic<std::uint64_t> recv_copied_bytes{0};
  // UDP flows only (DatagramTally says what each means); jitter in nanoseconds.
  std::atomic<std::uint64_t> datagrams{0};
  std::atomic<std::uint64_t> lost{0};
  std::atomic<std::uint64_t> out_of_order{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> socket_drops{0};
  std::atomic<std::uint64_t> strays{0};
  std::atomic<std::uint64_t> jitter_ns{0};
  // A UDP receiver's one-way delay percentiles, written once as it ends (before `finished`).
  std::atomic<std::uint64_t> delay_p50_ns{0};
  std::atomic<std::uint64_t> delay_p90_ns{0};
  std::atomic<std::uint64_t> delay_p99_ns{0};
  std::atomic<std::uint64_t> delay_max_ns{0};
  std::atomic<bool> finished{false};         // EOF seen (receiver) or half-closed (sender)
  std::atomic<bool> failed{false};           // ended by an error rather than cleanly

  void record(std::uint64_t moved, TestNanos now) noexcept {
    add_relaxed(bytes, moved);
    add_relaxed(calls, 1);
    if (first_byte_ns.load(std::memory_order_relaxed) < 0)
      first_byte_ns.store(now, std::memory_order_relaxed);
    last_byte_ns.store(now, std::memory_order_relaxed);
  }

  // --send-mode zerocopy: `completed` more sends reported done, `copied` of them copied after all.
  // Completed is written first and copied released after it, so a reader that acquires copied
  // first (zerocopy_snapshot) never sees more copied than completed, even mid-test.
  void record_zerocopy(std::uint64_t completed, std::uint64_t copied) noexcept {
    zerocopy_completed.store(zerocopy_completed.load(std::memory_order_relaxed) + completed, std::memory_order_relaxed);
    zerocopy_copied.store(zerocopy_copied.load(std::memory_order_relaxed) + copied, std::memory_order_release);
  }
  struct ZerocopyFigures {
    std::uint64_t completed = 0;
    std::uint64_t copied = 0;
  };
  DatagramTally datagram_snapshot() const noexcept {
    auto read = [](const std::atomic<std::uint64_t>& counter) { return counter.load(std::memory_order_relaxed); };
    return {read(datagrams),    read(lost),   read(out_of_order), read(duplicates),
            read(socket_drops), read(strays), static_cast<double>(read(jitter_ns)) * 1e-9};
  }
  ZerocopyFigures zerocopy_snapshot() const noexcept {
    const std::uint64_t copied_so_far = zerocopy_copied.load(std::memory_order_acquire);
    return {zerocopy_completed.load(std::memory_order_relaxed), copied_so_far};
  }
};

}  // namespace testio::stats
