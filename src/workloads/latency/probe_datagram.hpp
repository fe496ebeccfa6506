// A UDP latency probe as it travels: testio's datagram header (udp/datagram.hpp, so a capture
// reads it as any testio flow's), then the four times of a round trip and the client's estimate of
// the clocks' offset, which lets the server tell its one-way delay up too. All big-endian:
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
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace testio::workloads::latency {

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

}  // namespace testio::workloads::latency
