// libFuzzer target for what a UDP receiver reads from the network: any bytes as a datagram
// (testio's header and iperf3's two layouts), and as a run of sequence numbers for one flow's
// accounting, whose books must balance whatever arrives: received + lost = the numbers passed.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stats/udp_sequence.hpp"
#include "workloads/udp/datagram.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace testio;
  (void)workloads::udp::read_header(data, size);
  (void)workloads::udp::read_iperf3_header(data, size, true);
  (void)workloads::udp::read_iperf3_header(data, size, false);
  (void)workloads::udp::read_hello(data, size, false);
  (void)workloads::udp::read_hello(data, size, true);
  stats::UdpSequence flow;
  for (std::size_t at = 0; at + 4 <= size; at += 4) {
    std::uint32_t sequence = 0;
    std::memcpy(&sequence, data + at, sizeof(sequence));
    flow.on_datagram(sequence % 100000, 0, static_cast<double>(at));
    const stats::UdpSequence::Snapshot& now = flow.now();
    if (now.received + now.lost != now.next) __builtin_trap();
  }
  const stats::UdpSequence::Snapshot end = flow.at_end(flow.now().next + 3);
  if (end.received + end.lost != end.next + 3) __builtin_trap();
  return 0;
}
