#include "protocols/iperf3/messages.hpp"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "protocols/iperf3/wire.hpp"

namespace testio::iperf3 {
namespace {

// --title and --extra-data: free text a person typed, bounded within the parameters' 8 KiB.
constexpr std::size_t kMaxLabel = 1024;

using nlohmann::json;

json parse_object(std::string_view text, const char* what) {
  json message = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!message.is_object()) throw ProtocolError(std::string("the ") + what + " are not a JSON object");
  return message;
}

bool has(const json& message, const char* key) { return message.contains(key) && !message[key].is_null(); }

// A number within [0, cap]; cJSON may print integers as integers or with a fraction.
double number(const json& message, const char* key, double cap, double fallback) {
  if (!has(message, key)) return fallback;
  const json& value = message[key];
  if (!value.is_number()) throw ProtocolError(std::string("\"") + key + "\" is not a number");
  double number = value.get<double>();
  if (!std::isfinite(number) || number < 0 || number > cap)
    throw ProtocolError(std::string("\"") + key + "\" is out of range");
  return number;
}

std::uint64_t whole(const json& message, const char* key, double cap, std::uint64_t fallback) {
  return static_cast<std::uint64_t>(number(message, key, cap, static_cast<double>(fallback)));
}

std::string text(const json& message, const char* key, std::size_t cap) {
  if (!has(message, key)) return {};
  if (!message[key].is_string()) throw ProtocolError(std::string("\"") + key + "\" is not a string");
  std::string value = message[key].get<std::string>();
  if (value.size() > cap) throw ProtocolError(std::string("\"") + key + "\" is too long");
  return value;
}

// iperf3 tests its flags for presence; a peer may still send true, 1 or false.
bool flag(const json& message, const char* key) {
  if (!has(message, key)) return false;
  const json& value = message[key];
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>() != 0;
  throw ProtocolError(std::string("\"") + key + "\" is not a flag");
}

}  // namespace

Params parse_params(std::string_view body, const spec::Limits& limits) {
  if (body.size() > kMaxParamsJson) throw ProtocolError("the parameters are longer than 8192 bytes");
  json message = parse_object(body, "parameters");
  Params params;
  params.udp = flag(message, "udp");
  params.sctp = flag(message, "sctp");
  params.udp_counters_64bit = flag(message, "udp_counters_64bit");
  params.omit_s = number(message, "omit", limits.max_duration_s, 0);
  params.time_s = number(message, "time", limits.max_duration_s, 10);
  params.bytes = whole(message, "num", 1e18, 0);
  params.blocks = whole(message, "blockcount", 1e15, 0);
  params.parallel = static_cast<std::uint32_t>(
      whole(message, "parallel", std::min<double>(kMaxStreams, limits.max_connections), 1));
  if (params.parallel == 0) throw ProtocolError("\"parallel\" must be at least 1");
  params.len = whole(message, "len", static_cast<double>(limits.max_buffer), 128 * 1024);
  if (params.len == 0) params.len = 128 * 1024;
  params.window = whole(message, "window", static_cast<double>(limits.max_window), 0);
  params.mss = static_cast<std::uint32_t>(whole(message, "MSS", 65535, 0));
  params.nodelay = flag(message, "nodelay");
  params.reverse = flag(message, "reverse");
  params.bidirectional = flag(message, "bidirectional");
  if (params.reverse && params.bidirectional) throw ProtocolError("\"reverse\" and \"bidirectional\" exclude each other");
  params.congestion = text(message, "congestion", 15);  // TCP_CA_NAME_MAX is 16 with the NUL
  params.bandwidth = whole(message, "bandwidth", 1e15, 0);
  params.tos = static_cast<std::uint32_t>(whole(message, "TOS", 255, 0));
  params.title = text(message, "title", kMaxLabel);
  params.extra_data = text(message, "extra_data", kMaxLabel);
  params.get_server_output = has(message, "get_server_output");
  params.mptcp = flag(message, "mptcp");
  params.flow_label = static_cast<std::uint32_t>(whole(message, "flowlabel", 0xfffff, 0));
  params.authenticated = has(message, "authtoken");
  params.client_version = text(message, "client_version", 64);
  if (params.total_bytes() == 0 && params.time_s <= 0) throw ProtocolError("\"time\" must be more than 0 seconds");
  return params;
}

std::string to_json(const Params& params) {
  json message = {{params.udp ? "udp" : "tcp", true}, {"omit", params.omit_s}, {"time", params.time_s}, {"num", params.bytes},
                  {"blockcount", params.blocks}, {"parallel", params.parallel}, {"len", params.len}};
  // iperf3 clients send whole seconds as integers; some servers read them with valueint.
  if (params.omit_s == std::floor(params.omit_s)) message["omit"] = static_cast<std::int64_t>(params.omit_s);
  if (params.time_s == std::floor(params.time_s)) message["time"] = static_cast<std::int64_t>(params.time_s);
  if (params.window) message["window"] = params.window;
  if (params.mss) message["MSS"] = params.mss;
  if (params.nodelay) message["nodelay"] = true;
  if (params.reverse) message["reverse"] = true;
  if (params.bidirectional) message["bidirectional"] = true;
  if (!params.congestion.empty()) message["congestion"] = params.congestion;
  if (params.udp && params.bandwidth) message["bandwidth"] = params.bandwidth;  // absent: unpaced
  if (params.udp_counters_64bit) message["udp_counters_64bit"] = 1;
  if (params.tos) message["TOS"] = params.tos;
  if (!params.title.empty()) message["title"] = params.title;
  if (!params.extra_data.empty()) message["extra_data"] = params.extra_data;
  if (params.get_server_output) message["get_server_output"] = 1;
  if (params.mptcp) message["mptcp"] = true;  // iperf3 reads it only as JSON true
  if (params.flow_label) message["flowlabel"] = params.flow_label;
  message["client_version"] = params.client_version;
  return message.dump();
}

Results parse_results(std::string_view body, const std::vector<std::int32_t>& ids) {
  if (body.size() > kMaxResultsJson) throw ProtocolError("the results are longer than 1 MiB");
  json message = parse_object(body, "results");
  Results results;
  for (const char* key : {"cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits"})
    if (!has(message, key) || !message[key].is_number()) throw ProtocolError(std::string("the results lack \"") + key + "\"");
  results.cpu_total = message["cpu_util_total"].get<double>();
  results.cpu_user = message["cpu_util_user"].get<double>();
  results.cpu_system = message["cpu_util_system"].get<double>();
  results.sender_has_retransmits = message["sender_has_retransmits"].get<int>();
  results.congestion = text(message, "congestion_used", 64);
  if (has(message, "server_output_json") && message["server_output_json"].is_object())
    results.server_output_json = message["server_output_json"].dump();
  results.server_output_text = text(message, "server_output_text", kMaxResultsJson);
  if (!has(message, "streams") || !message["streams"].is_array()) throw ProtocolError("the results lack \"streams\"");
  const json& streams = message["streams"];
  if (streams.size() != ids.size())
    throw ProtocolError("the results list " + std::to_string(streams.size()) + " streams, not " +
                        std::to_string(ids.size()));
  std::set<std::int32_t> expected(ids.begin(), ids.end()), seen;
  for (const json& entry : streams) {
    if (!entry.is_object()) throw ProtocolError("a stream in the results is not an object");
    if (!has(entry, "id") || !entry["id"].is_number_integer()) throw ProtocolError("a stream in the results has no id");
    StreamResult stream;
    stream.id = entry["id"].get<std::int32_t>();
    if (!expected.count(stream.id) || !seen.insert(stream.id).second)
      throw ProtocolError("the results name stream " + std::to_string(stream.id) + ", unknown or twice");
    stream.bytes = whole(entry, "bytes", 1e19, 0);
    if (has(entry, "retransmits") && entry["retransmits"].is_number()) stream.retransmits = entry["retransmits"].get<std::int64_t>();
    stream.start_s = number(entry, "start_time", 1e9, 0);
    stream.end_s = number(entry, "end_time", 1e9, 0);
    stream.jitter_s = number(entry, "jitter", 3600, 0);
    stream.errors = whole(entry, "errors", 1e19, 0);
    stream.packets = whole(entry, "packets", 1e19, 0);
    results.streams.push_back(stream);
  }
  return results;
}

std::string to_json(const Results& results) {
  json streams = json::array();
  for (const StreamResult& stream : results.streams)
    streams.push_back({{"id", stream.id}, {"bytes", stream.bytes}, {"retransmits", stream.retransmits},
                       {"jitter", stream.jitter_s}, {"errors", stream.errors}, {"packets", stream.packets},
                       {"start_time", stream.start_s},
                       {"end_time", stream.end_s}});
  json message = {{"cpu_util_total", results.cpu_total}, {"cpu_util_user", results.cpu_user},
                  {"cpu_util_system", results.cpu_system}, {"sender_has_retransmits", results.sender_has_retransmits},
                  {"streams", streams}};
  if (!results.congestion.empty()) message["congestion_used"] = results.congestion;
  if (!results.server_output_text.empty()) message["server_output_text"] = results.server_output_text;
  return message.dump();
}

std::int32_t stream_id(std::uint32_t index) noexcept {
  return index == 0 ? 1 : static_cast<std::int32_t>(index) + 2;
}

std::optional<std::uint32_t> connection_of(std::int32_t id) noexcept {
  if (id == 1) return 0;
  if (id >= 3) return static_cast<std::uint32_t>(id - 2);
  return std::nullopt;
}

std::vector<std::int32_t> stream_ids(std::uint32_t count) {
  std::vector<std::int32_t> ids;
  for (std::uint32_t i = 0; i < count; ++i) ids.push_back(stream_id(i));
  return ids;
}

}  // namespace testio::iperf3
