// libFuzzer target for what a UDP receiver reads from the network: any bytes as a datagram
// (testio's header and iperf3's two layouts, a latency probe or its echo), and as a run of sequence numbers for one flow's
// accounting, whose books must balance whatever arrives: received + lost = the numbers passed.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stats/udp_sequence.hpp"
#include "workloads/latency/latency.hpp"
#include "workloads/udp/udp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace testio;
  (void)workloads::udp::read_header(data, size);
  (void)workloads::udp::read_iperf3_header(data, size, true);
  (void)workloads::udp::read_iperf3_header(data, size, false);
  (void)workloads::udp::read_hello(data, size, false);
  (void)workloads::udp::read_hello(data, size, true);
  // A probe that reads back must say what was read (its test and flow are the header's).
  if (size >= 32) {
    const std::optional<workloads::udp::DatagramHeader> header = workloads::udp::read_header(data, size);
    const std::uint64_t test_id = header ? header->test_id : 0;
    const std::uint32_t stream = header ? header->stream : 0;
    if (auto probe = workloads::latency::read_probe(data, size, test_id, stream)) {
      unsigned char again[workloads::latency::kProbeSize];
      workloads::latency::write_probe(*probe, test_id, stream, again);
      auto reread = workloads::latency::read_probe(again, sizeof again, test_id, stream);
      if (!reread || reread->sent_ns != probe->sent_ns || reread->replied_ns != probe->replied_ns ||
          reread->offset_ns != probe->offset_ns || reread->sequence != probe->sequence)
        __builtin_trap();
    }
  }
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
