// A UDP flow's datagram figures as the results frames carry them. Internal to testio's codec (codec.cpp).
#pragma once

#include <cstddef>

#include <nlohmann/json_fwd.hpp>

#include "stats/counters.hpp"

namespace testio::control {

using nlohmann::json;

// The interval sample's UDP numbers, after its nine TCP ones.
inline constexpr std::size_t kDatagramSampleFields = 7;

json datagram_json(const stats::DatagramTally& tally);
// A stream's optional "udp" object (absent: no datagrams); throws ProtocolError.
stats::DatagramTally parse_datagrams(const json& stream);
// A receiver's one-way delay percentiles: "delay_ns" in a stream's "udp" object, when measured.
json delay_json(const stats::DelayFigures& delay);
stats::DelayFigures parse_delay(const json& stream);
void append_datagram_sample(const stats::DatagramTally& tally, json& sample);
// The seven numbers from `first` on, already checked to be whole numbers.
stats::DatagramTally parse_datagram_sample(const json& sample, std::size_t first);

}  // namespace testio::control
