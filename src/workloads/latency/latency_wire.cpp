// The latency probe's datagram: testio's UDP header, then the times each side stamps. A peer's
// probes are read here, in a unit of its own so the fuzz target builds it alone.
#include "workloads/latency/latency.hpp"

#include "workloads/udp/udp.hpp"

namespace testio::workloads::latency {

// The probe datagram: testio's UDP header, then the times.
namespace {

std::uint64_t read_u64(const unsigned char* data) noexcept { return udp::read_be(data, 8); }
void write_u64(std::uint64_t value, unsigned char* out) noexcept { udp::write_be(value, 8, out); }

}  // namespace

void write_probe(const ProbeTimes& times, std::uint64_t test_id, std::uint32_t stream, unsigned char* out) noexcept {
  udp::DatagramHeader header;
  header.sec = static_cast<std::uint32_t>(times.sent_ns / 1'000'000'000);
  header.usec = static_cast<std::uint32_t>(times.sent_ns % 1'000'000'000 / 1000);
  header.sequence = times.sequence;
  header.stream = stream;
  header.test_id = test_id;
  udp::write_header(header, out);
  write_u64(times.sent_ns, out + 32);
  write_u64(times.sent_mono_ns, out + 40);
  write_u64(times.received_ns, out + 48);
  write_u64(times.replied_ns, out + 56);
  write_u64(static_cast<std::uint64_t>(times.offset_ns), out + 64);
}

void stamp_reply(std::uint64_t received_ns, std::uint64_t replied_ns, unsigned char* probe) noexcept {
  write_u64(received_ns, probe + 48);
  write_u64(replied_ns, probe + 56);
}

std::optional<ProbeTimes> read_probe(const unsigned char* data, std::size_t size, std::uint64_t test_id,
                                     std::uint32_t stream) noexcept {
  if (size < kProbeSize) return std::nullopt;
  const std::optional<udp::DatagramHeader> header = udp::read_header(data, size);
  if (!header || header->end || header->test_id != test_id || header->stream != stream) return std::nullopt;
  ProbeTimes times;
  times.sequence = header->sequence;
  times.sent_ns = read_u64(data + 32);
  times.sent_mono_ns = read_u64(data + 40);
  times.received_ns = read_u64(data + 48);
  times.replied_ns = read_u64(data + 56);
  times.offset_ns = static_cast<std::int64_t>(read_u64(data + 64));
  return times;
}

}  // namespace testio::workloads::latency
