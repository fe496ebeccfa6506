#include "mesh/pair_result.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace testio::mesh {
namespace {

using json = nlohmann::ordered_json;

// Whether `value` is an integer from 0 to T's largest. nlohmann converts any number to an
// integer type, a float beyond its range included, and that conversion is undefined.
template <typename T>
bool holds_count(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>() <= std::numeric_limits<T>::max();
  if (!value.is_number_integer()) return false;
  const std::int64_t number = value.get<std::int64_t>();
  return number >= 0 && static_cast<std::uint64_t>(number) <= std::numeric_limits<T>::max();
}

template <typename T>
T field(const json& object, const char* name) {
  auto found = object.find(name);
  if (found == object.end()) throw std::invalid_argument(std::string("a pair has no \"") + name + "\"");
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!holds_count<T>(*found)) throw std::invalid_argument(std::string("a pair's \"") + name + "\" is not a count");
  }
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("a pair's \"") + name + "\" has the wrong type");
  }
}

// The figures a pair's report holds at the places testio's JSON has them; 0 where absent.
void read_figures(const json& report, PairResult& pair) {
  const json end = report.value("end", json::object());
  const json received = end.value("sum_received", json::object());
  const json sent = end.value("sum_sent", json::object());
  pair.bits_per_second = received.value("bits_per_second", 0.0);
  pair.received_bytes = received.value("bytes", std::uint64_t{0});
  pair.sent_bytes = sent.value("bytes", std::uint64_t{0});
  pair.retransmits = sent.value("retransmits", std::uint64_t{0});
}

}  // namespace

std::string encode_host(const Host& host) {
  return std::string(host.listening ? "1" : "0") + "|" + host.address + "|" + std::to_string(host.port) + "|" + host.reason;
}

Host decode_host(std::string_view record, std::uint32_t rank) {
  Host host;
  host.rank = rank;
  const std::size_t first = record.find('|'), second = record.find('|', first + 1),
                    third = record.find('|', second + 1);
  if (first != 1 || second == std::string_view::npos || third == std::string_view::npos || (record[0] != '0' && record[0] != '1'))
    throw std::invalid_argument("rank " + std::to_string(rank) + " sent a record that is not LISTENING|ADDRESS|PORT|REASON");
  host.listening = record[0] == '1';
  host.address = std::string(record.substr(first + 1, second - first - 1));
  const std::string_view port = record.substr(second + 1, third - second - 1);
  unsigned value = 0;
  auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (error != std::errc() || end != port.data() + port.size() || value > 65535 || host.address.empty())
    throw std::invalid_argument("rank " + std::to_string(rank) + " sent no address and port");
  host.port = static_cast<std::uint16_t>(value);
  host.reason = std::string(record.substr(third + 1));
  return host;
}

json to_json(const PairResult& pair) {
  return {{"from", pair.from}, {"to", pair.to}, {"from_address", pair.from_address}, {"to_address", pair.to_address},
          {"ok", pair.ok}, {"reason", pair.reason}, {"bits_per_second", pair.bits_per_second},
          {"sent_bytes", pair.sent_bytes}, {"received_bytes", pair.received_bytes}, {"retransmits", pair.retransmits},
          {"report", pair.report ? *pair.report : json()}};
}

std::vector<PairResult> parse_pairs(std::string_view text, std::uint32_t ranks) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_array()) throw std::invalid_argument("the pairs are not a JSON array");
  std::vector<PairResult> pairs;
  for (const json& entry : document) {
    if (!entry.is_object()) throw std::invalid_argument("a pair is not a JSON object");
    PairResult pair;
    pair.from = field<std::uint32_t>(entry, "from");
    pair.to = field<std::uint32_t>(entry, "to");
    if (pair.from >= ranks || pair.to >= ranks || pair.from == pair.to)
      throw std::invalid_argument("a pair names ranks " + std::to_string(pair.from) + " and " + std::to_string(pair.to) +
                                  " of " + std::to_string(ranks));
    pair.from_address = field<std::string>(entry, "from_address");
    pair.to_address = field<std::string>(entry, "to_address");
    pair.ok = field<bool>(entry, "ok");
    pair.reason = field<std::string>(entry, "reason");
    pair.bits_per_second = field<double>(entry, "bits_per_second");
    pair.sent_bytes = field<std::uint64_t>(entry, "sent_bytes");
    pair.received_bytes = field<std::uint64_t>(entry, "received_bytes");
    pair.retransmits = field<std::uint64_t>(entry, "retransmits");
    if (entry.contains("report") && !entry["report"].is_null()) pair.report = std::make_shared<const json>(entry["report"]);
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

PairResult pair_from_run(PairResult pair, int exit_code, const std::string& report_text, const std::string& complaint) {
  json report = json::parse(report_text, nullptr, /*allow_exceptions=*/false);
  if (!report.is_discarded() && report.is_object()) {
    pair.report = std::make_shared<const json>(report);
    read_figures(report, pair);
  }
  pair.ok = exit_code == 0 && pair.report != nullptr;  // set only from a JSON object
  if (!pair.ok) {
    pair.reason = !complaint.empty()              ? complaint
                  : report.is_object() && report.contains("error") && report["error"].is_string()
                      ? report["error"].get<std::string>()
                                                                   : "the test exited with code " + std::to_string(exit_code);
  }
  return pair;
}

}  // namespace testio::mesh
