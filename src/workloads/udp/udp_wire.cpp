// The UDP wire: the header of every datagram and a flow's hello, as testio and iperf3 write them.
// What a peer sends is read here, every length and field checked; it is a unit of its own so the
// fuzz target (tests/fuzz/udp_fuzzer.cpp) builds it without the rest of the workload.
#include "workloads/udp/udp.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace testio::workloads::udp {

std::uint64_t read_be(const unsigned char* data, int bytes) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = value << 8 | data[i];
  return value;
}

void write_be(std::uint64_t value, int bytes, unsigned char* out) noexcept {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<unsigned char>(value & 0xff);
    value >>= 8;
  }
}

namespace {

constexpr std::uint32_t kHelloMagic = 0x74696f48;   // "tioH"
constexpr std::uint32_t kAnswerMagic = 0x74696f41;  // "tioA"
constexpr std::uint32_t kHelloVersion = 1;

}  // namespace

void write_hello(const FlowHello& hello, bool answer, unsigned char* out) noexcept {
  write_be(answer ? kAnswerMagic : kHelloMagic, 4, out);
  write_be(kHelloVersion, 4, out + 4);
  write_be(hello.test_id, 8, out + 8);
  write_be(hello.stream, 4, out + 16);
  write_be(0, 4, out + 20);
}

std::optional<FlowHello> read_hello(const unsigned char* data, std::size_t size, bool answer) noexcept {
  if (size != kHelloSize || read_be(data, 4) != (answer ? kAnswerMagic : kHelloMagic) ||
      read_be(data + 4, 4) != kHelloVersion)
    return std::nullopt;
  return FlowHello{read_be(data + 8, 8), static_cast<std::uint32_t>(read_be(data + 16, 4))};
}

void write_header(const DatagramHeader& header, unsigned char* out) noexcept {
  write_iperf3_header(header, true, out);
  write_be(header.end ? kEndMagic : kMagic, 4, out + 16);
  write_be(header.stream, 4, out + 20);
  write_be(header.test_id, 8, out + 24);
}

std::optional<DatagramHeader> read_header(const unsigned char* data, std::size_t size) noexcept {
  if (size < kTestioHeader) return std::nullopt;
  const std::uint64_t magic = read_be(data + 16, 4);
  if (magic != kMagic && magic != kEndMagic) return std::nullopt;
  std::optional<DatagramHeader> header = read_iperf3_header(data, size, true);
  if (!header) return std::nullopt;
  header->end = magic == kEndMagic;
  header->stream = static_cast<std::uint32_t>(read_be(data + 20, 4));
  header->test_id = read_be(data + 24, 8);
  return header;
}

std::optional<DatagramHeader> read_iperf3_header(const unsigned char* data, std::size_t size,
                                                 bool counters_64bit) noexcept {
  if (size < (counters_64bit ? kIperf3Header64 : kIperf3Header32)) return std::nullopt;
  DatagramHeader header;
  header.sec = static_cast<std::uint32_t>(read_be(data, 4));
  header.usec = static_cast<std::uint32_t>(read_be(data + 4, 4));
  if (header.usec >= 1000000) return std::nullopt;
  header.sequence = counters_64bit ? read_be(data + 8, 8) : read_be(data + 8, 4);
  return header;
}

void write_iperf3_header(const DatagramHeader& header, bool counters_64bit, unsigned char* out) noexcept {
  write_be(header.sec, 4, out);
  write_be(header.usec, 4, out + 4);
  if (counters_64bit)
    write_be(header.sequence, 8, out + 8);
  else
    write_be(header.sequence & 0xffffffffu, 4, out + 8);
}

std::size_t header_size(Wire wire) noexcept {
  switch (wire) {
    case Wire::iperf3_32: return kIperf3Header32;
    case Wire::iperf3_64: return kIperf3Header64;
    case Wire::testio: break;
  }
  return kTestioHeader;
}

void write_wire_header(Wire wire, const DatagramHeader& header, unsigned char* out) noexcept {
  if (wire == Wire::testio) return write_header(header, out);
  DatagramHeader counted = header;
  ++counted.sequence;
  write_iperf3_header(counted, wire == Wire::iperf3_64, out);
}

std::optional<DatagramHeader> read_wire_header(Wire wire, const unsigned char* data, std::size_t size,
                                               std::uint64_t test_id, std::uint32_t stream) noexcept {
  if (wire == Wire::testio) {
    std::optional<DatagramHeader> header = read_header(data, size);
    if (!header || header->test_id != test_id || header->stream != stream) return std::nullopt;
    return header;
  }
  std::optional<DatagramHeader> header = read_iperf3_header(data, size, wire == Wire::iperf3_64);
  if (!header || header->sequence == 0) return std::nullopt;
  --header->sequence;
  return header;
}

}  // namespace testio::workloads::udp
