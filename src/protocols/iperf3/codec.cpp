// iperf3's wire as bytes and JSON: its cookie and state bytes, its parameters and results
// messages, this side's figures as iperf3's results, and iperf3's JSON report of a test.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "lifecycle/start.hpp"
#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/reports.hpp"
#include "protocols/iperf3/results.hpp"
#include "protocols/iperf3/wire.hpp"
#include "stats/summary.hpp"
#include "util/units.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/udp/udp.hpp"

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

std::string state_name(std::int8_t state) {
  switch (static_cast<State>(state)) {
    case State::test_start: return "TEST_START (1)";
    case State::test_running: return "TEST_RUNNING (2)";
    case State::test_end: return "TEST_END (4)";
    case State::param_exchange: return "PARAM_EXCHANGE (9)";
    case State::create_streams: return "CREATE_STREAMS (10)";
    case State::server_terminate: return "SERVER_TERMINATE (11)";
    case State::client_terminate: return "CLIENT_TERMINATE (12)";
    case State::exchange_results: return "EXCHANGE_RESULTS (13)";
    case State::display_results: return "DISPLAY_RESULTS (14)";
    case State::iperf_done: return "IPERF_DONE (16)";
    case State::access_denied: return "ACCESS_DENIED (-1)";
    case State::server_error: return "SERVER_ERROR (-2)";
  }
  return "unknown state " + std::to_string(state);
}

Cookie make_cookie() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::random_device seed;
  std::mt19937 generator(seed());
  std::uniform_int_distribution<std::size_t> pick(0, sizeof(kAlphabet) - 2);
  Cookie cookie{};
  for (std::size_t i = 0; i + 1 < kCookieBytes; ++i) cookie[i] = kAlphabet[pick(generator)];
  cookie[kCookieBytes - 1] = '\0';
  return cookie;
}

bool may_start_cookie(const unsigned char* bytes, std::size_t size) noexcept {
  for (std::size_t i = 0; i < size; ++i)
    if (bytes[i] < 0x20 || bytes[i] > 0x7e) return false;
  return true;
}

bool is_cookie(const unsigned char* bytes, std::size_t size) noexcept {
  return size == kCookieBytes && bytes[kCookieBytes - 1] == 0 && may_start_cookie(bytes, kCookieBytes - 1);
}

Cookie cookie_from(const unsigned char* bytes) noexcept {
  Cookie cookie{};
  for (std::size_t i = 0; i < kCookieBytes; ++i) cookie[i] = static_cast<char>(bytes[i]);
  return cookie;
}

std::string error_text(std::int32_t i_errno) {
  switch (i_errno) {
    case 13: return "not implemented";
    case 27: return "total required bandwidth is larger than server limit";
    case 114: return "unable to receive parameters from client";
    case 121: return "the server is busy running a test";
    case 124: return "unable to set socket buffer size";
    case 130: return "unable to set socket window size";
    case 134: return "unable to set TCP_CONGESTION";
    case 142: return "test authorization failed";
    case 204: return "unable to accept stream connection";
    default: return "";
  }
}

std::array<unsigned char, 4> encode_u32(std::uint32_t value) noexcept {
  return {static_cast<unsigned char>(value >> 24), static_cast<unsigned char>(value >> 16),
          static_cast<unsigned char>(value >> 8), static_cast<unsigned char>(value)};
}

std::uint32_t decode_u32(const unsigned char* bytes) noexcept {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
         std::uint32_t{bytes[3]};
}

namespace {

// No receive mark: iperf3's data ends without EOF (TEST_END goes on the control connection), so
// bytes held back for a batch would never be counted.
constexpr workloads::bulk::Options kIperf3Data{.data_end_with_eof = false};

void add_direction(std::string& text, const DirectionResults& direction, const char* role) {
  if (!direction.present) return;
  std::uint64_t bytes = 0;
  double seconds = 0;
  char line[160];
  for (std::size_t i = 0; i < direction.side.streams.size(); ++i) {
    const stats::StreamFigures& stream = direction.side.streams[i];
    const double span = stream.end_s - stream.start_s;
    std::snprintf(line, sizeof line, "[%5u] %15llu B %8.2f s %12.2f Mbit/s  %s\n", direction.connections[i] + 1,
                  static_cast<unsigned long long>(stream.bytes), span, util::bits_per_second(stream.bytes, span) / 1e6,
                  role);
    text += line;
    bytes += stream.bytes;
    seconds = std::max(seconds, span);
  }
  std::snprintf(line, sizeof line, "[  SUM] %15llu B %8.2f s %12.2f Mbit/s  %s\n", static_cast<unsigned long long>(bytes),
                seconds, util::bits_per_second(bytes, seconds) / 1e6, role);
  text += line;
}

}  // namespace

std::string output_text(const DirectionResults& sent, const DirectionResults& received) {
  std::string text = std::string("testio ") + TESTIO_VERSION + " server, as it counted:\n";
  add_direction(text, received, "receiver");
  add_direction(text, sent, "sender");
  return text;
}

std::pair<DirectionResults, DirectionResults> by_direction(lifecycle::DirectedResults figures,
                                                           const workloads::DirectionLayout& layout,
                                                           workloads::Side local, std::optional<double> window_end_s) {
  // This side sends forward (client to server) when it is the client.
  const bool sending_forward = local == workloads::Side::client;
  auto take = [&](bool forward) -> lifecycle::SideResults {
    return forward ? std::move(figures.forward) : std::move(*figures.reverse);
  };
  DirectionResults sent, received;
  if (layout.count(sending_forward)) {
    sent = {true, take(sending_forward), layout.connections(sending_forward)};
    if (window_end_s)
      for (stats::StreamFigures& stream : sent.side.streams) stream.end_s = std::max(stream.end_s, *window_end_s);
  }
  if (layout.count(!sending_forward)) received = {true, take(!sending_forward), layout.connections(!sending_forward)};
  return {std::move(sent), std::move(received)};
}

Results results_of(const DirectionResults& sent, const DirectionResults& received, std::size_t connections, bool udp) {
  Results results;
  results.streams.resize(connections);
  stats::CpuTimes cpu;
  double wall_s = 0;
  for (const DirectionResults* direction : {&sent, &received}) {
    if (!direction->present) continue;
    const bool sending = direction == &sent;
    // iperf3 counts from the end of -O: the omitted intervals are left out, as in the summary.
    const std::vector<stats::StreamFigures> kept = stats::excluding_omitted(direction->side.streams, direction->side.intervals);
    for (std::size_t k = 0; k < direction->connections.size(); ++k) {
      const std::uint32_t connection = direction->connections[k];
      const stats::StreamFigures& figures = kept[k];
      StreamResult& stream = results.streams[connection];
      stream.id = stream_id(connection);
      stream.bytes = figures.bytes;
      stream.start_s = figures.start_s;
      stream.end_s = figures.end_s;
      // UDP as iperf3 counts it: a sender its datagrams; a receiver its highest sequence number
      // and the gaps below it.
      stream.packets = figures.udp.datagrams + (sending ? 0 : figures.udp.lost);
      if (!sending) {
        stream.errors = figures.udp.lost;
        stream.jitter_s = figures.udp.jitter_s;
      }
      if (sending && !udp) {
        stats::TcpSummary tcp = stats::tcp_summary(direction->side.intervals, k);
        stream.retransmits = tcp.valid ? tcp.retransmits : -1;
        if (tcp.valid) results.sender_has_retransmits = 1;
      }
    }
    // Both directions ran in one process: its CPU is counted once.
    cpu = direction->side.cpu;
    wall_s = std::max(wall_s, direction->side.wall_s);
    if (results.congestion.empty()) results.congestion = direction->side.congestion;
  }
  stats::CpuUsage usage = stats::cpu_usage(cpu, wall_s, 0);
  results.cpu_total = usage.total_percent;
  results.cpu_user = usage.user_percent;
  results.cpu_system = usage.system_percent;
  if (!sent.present) results.sender_has_retransmits = -1;
  else if (results.sender_has_retransmits != 1) results.sender_has_retransmits = 0;
  return results;
}

std::unique_ptr<workloads::TestSide> make_side(workloads::Side local, const spec::TestSpec& spec,
                                               std::optional<workloads::udp::Wire> udp_wire) {
  if (udp_wire) return workloads::udp::make_side(local, spec, *udp_wire);
  return workloads::bulk::make_side(local, spec, kIperf3Data);
}

report::TestReport direction_report(report::StartInfo start, const DirectionResults& local, bool local_sends,
                                    const Results& peer) {
  report::TestReport report;
  report.start = lifecycle::direction_start(std::move(start), local.connections, local_sends);

  report::SideReport mine;
  mine.present = true;
  mine.totals = local.side.streams;
  mine.intervals = local.side.intervals;
  mine.cpu = local.side.cpu;
  mine.wall_s = local.side.wall_s;
  mine.congestion = local.side.congestion;
  mine.mptcp_subflows = local.side.mptcp_subflows;

  report::SideReport theirs;
  theirs.present = true;
  for (std::uint32_t connection : local.connections) {
    const std::int32_t id = stream_id(connection);
    auto found = std::find_if(peer.streams.begin(), peer.streams.end(),
                              [id](const StreamResult& stream) { return stream.id == id; });
    stats::StreamFigures figures;
    if (found != peer.streams.end()) {
      figures.bytes = found->bytes;
      // UDP: a sending peer's datagrams; a receiving peer's distinct ones, its gaps, its jitter.
      figures.udp.datagrams = local_sends ? found->packets - std::min(found->packets, found->errors) : found->packets;
      if (local_sends) {
        figures.udp.lost = found->errors;
        figures.udp.jitter_s = found->jitter_s;
      }
      figures.start_s = found->start_s;
      figures.end_s = found->end_s > found->start_s ? found->end_s : local.side.wall_s;
      theirs.told_retransmits.push_back(found->retransmits);
    } else {
      figures.failed = true;
      theirs.told_retransmits.push_back(-1);
    }
    theirs.wall_s = std::max(theirs.wall_s, figures.end_s);
    theirs.totals.push_back(figures);
  }
  // iperf3 gives CPU as percent of the test's wall time.
  theirs.cpu.user_s = peer.cpu_user / 100.0 * theirs.wall_s;
  theirs.cpu.system_s = peer.cpu_system / 100.0 * theirs.wall_s;
  theirs.congestion = peer.congestion;

  report.sender = local_sends ? std::move(mine) : std::move(theirs);
  report.receiver = local_sends ? std::move(theirs) : std::move(mine);
  return report;
}

}  // namespace testio::iperf3
