// A UDP flow's datagram figures on the wire (results frames): a stream's "udp" object and the
// seven numbers an interval sample carries after its TCP ones. Written only for UDP flows, so
// other streams read as before.
#include "protocols/testio/datagram_fields.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "protocols/testio/json_fields.hpp"

namespace testio::control {
namespace {

using namespace fields;

constexpr double kMaxJitterNs = 3600e9;  // an hour: beyond that a peer's figure is nonsense

std::uint64_t jitter_ns(const stats::DatagramTally& tally) {
  return static_cast<std::uint64_t>(tally.jitter_s * 1e9 + 0.5);
}

}  // namespace

json datagram_json(const stats::DatagramTally& tally) {
  return {{"datagrams", tally.datagrams},     {"lost", tally.lost},     {"out_of_order", tally.out_of_order},
          {"duplicates", tally.duplicates},   {"socket_drops", tally.socket_drops}, {"strays", tally.strays},
          {"jitter_ns", jitter_ns(tally)}};
}

json delay_json(const stats::DelayFigures& delay) {
  return json::array({delay.p50_ns, delay.p90_ns, delay.p99_ns, delay.max_ns});
}

stats::DelayFigures parse_delay(const json& stream) {
  auto udp = stream.find("udp");
  if (udp == stream.end() || !udp->is_object() || !udp->contains("delay_ns")) return {};
  const json& delay = (*udp)["delay_ns"];
  if (!delay.is_array() || delay.size() != 4 || !std::all_of(delay.begin(), delay.end(), fields::is_count))
    throw ProtocolError("field \"delay_ns\" must be [p50, p90, p99, max] in whole nanoseconds");
  stats::DelayFigures figures{delay[0].get<std::uint64_t>(), delay[1].get<std::uint64_t>(), delay[2].get<std::uint64_t>(),
                              delay[3].get<std::uint64_t>()};
  if (!(figures.p50_ns <= figures.p90_ns && figures.p90_ns <= figures.p99_ns && figures.p99_ns <= figures.max_ns))
    throw ProtocolError("field \"delay_ns\" must be in increasing order");
  return figures;
}

stats::DatagramTally parse_datagrams(const json& stream) {
  stats::DatagramTally tally;
  auto udp = stream.find("udp");
  if (udp == stream.end()) return tally;
  if (!udp->is_object()) throw ProtocolError("field \"udp\" must be an object");
  tally.datagrams = get_uint(*udp, "datagrams", 0, UINT64_MAX);
  tally.lost = get_uint(*udp, "lost", 0, UINT64_MAX);
  tally.out_of_order = get_uint(*udp, "out_of_order", 0, UINT64_MAX);
  tally.duplicates = get_uint(*udp, "duplicates", 0, UINT64_MAX);
  tally.socket_drops = get_uint(*udp, "socket_drops", 0, UINT64_MAX);
  tally.strays = get_uint(*udp, "strays", 0, UINT64_MAX);
  tally.jitter_s = static_cast<double>(get_uint(*udp, "jitter_ns", 0, kMaxJitterNs)) * 1e-9;
  if (tally.out_of_order > tally.datagrams)
    throw ProtocolError("field \"out_of_order\" cannot exceed \"datagrams\"");
  return tally;
}

void append_datagram_sample(const stats::DatagramTally& tally, json& sample) {
  for (std::uint64_t value : {tally.datagrams, tally.lost, tally.out_of_order, tally.duplicates, tally.socket_drops,
                              tally.strays, jitter_ns(tally)})
    sample.push_back(value);
}

stats::DatagramTally parse_datagram_sample(const json& sample, std::size_t first) {
  auto at = [&](std::size_t i) { return sample[first + i].get<std::uint64_t>(); };
  stats::DatagramTally tally{at(0), at(1), at(2), at(3), at(4), at(5), 0};
  if (static_cast<double>(at(6)) > kMaxJitterNs) throw ProtocolError("an interval's jitter is out of range");
  tally.jitter_s = static_cast<double>(at(6)) * 1e-9;
  return tally;
}

}  // namespace testio::control
