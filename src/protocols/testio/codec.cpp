// testio's wire as bytes and JSON: the 24-byte preamble, the length-prefixed frames, and every
// message both ways (the handshake's, start, stop, error, and each side's figures), each built and
// parsed with every field checked (docs/protocol.md). The fuzz target reads peers' input through
// these parsers.

// The handshake's frames and the small ones (start, stop, error): build and parse.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "protocols/testio/datagram_fields.hpp"
#include "protocols/testio/framing.hpp"
#include "protocols/testio/json_fields.hpp"
#include "protocols/testio/protocol.hpp"

namespace testio::control {

using namespace fields;

json to_json(const ServerHello& hello) {
  return {{"type", "hello"}, {"server_version", hello.server_version}, {"auth", hello.auth}, {"nonce", hello.nonce}};
}

ServerHello parse_server_hello(const json& message) {
  expect_type(message, "hello");
  ServerHello hello;
  hello.server_version = get_string(message, "server_version", 64);
  hello.auth = get_string(message, "auth", 32);
  if (hello.auth != "none" && hello.auth != "hmac-sha256")
    throw ProtocolError("the server asks for authentication \"" + hello.auth + "\", which this client does not know");
  hello.nonce = get_string(message, "nonce", 128);
  if (hello.auth != "none" && hello.nonce.size() < 32) throw ProtocolError("the server's challenge is too short");
  return hello;
}

json to_json(const TestRequest& request) {
  // The spec's own mapping, plus what belongs to the handshake rather than the test.
  json message = spec::to_json(request.spec);
  message["type"] = "test_request";
  message["client_threads"] = request.client_threads;
  message["client_version"] = request.client_version;
  message["auth"] = request.auth;
  message["max_wait_s"] = request.max_wait_s;
  return message;
}

TestRequest parse_test_request(const json& message) {
  expect_type(message, "test_request");
  TestRequest request;
  try {
    request.spec = spec::spec_from_json(message);
  } catch (const spec::SpecError& error) {
    throw ProtocolError(error.what());
  }
  request.client_threads = static_cast<std::uint32_t>(get_uint(message, "client_threads", 1, 1u << 20));
  request.client_version = get_string(message, "client_version", 64);
  request.auth = get_string(message, "auth", 128);
  if (message.contains("max_wait_s")) request.max_wait_s = get_double(message, "max_wait_s", 0, 86400);
  return request;
}

json to_json(const TestAccepted& accepted) {
  return {{"type", "test_accepted"},
          {"test_id", accepted.test_id},
          {"server_threads", accepted.server_threads},
          {"server_cpus", accepted.server_cpus},
          {"server_version", accepted.server_version},
          {"server_received_ns", accepted.server_received_ns},
          {"server_clock_ns", accepted.server_clock_ns}};
}

TestAccepted parse_test_accepted(const json& message, const spec::Limits& limits) {
  expect_type(message, "test_accepted");
  TestAccepted accepted;
  accepted.test_id = get_uint(message, "test_id", 1, UINT64_MAX);
  accepted.server_threads =
      static_cast<std::uint32_t>(get_uint(message, "server_threads", 1, limits.max_threads));
  accepted.server_version = get_string(message, "server_version", 64);
  accepted.server_cpus = get_cpus(message, "server_cpus");
  accepted.server_received_ns = get_optional_uint(message, "server_received_ns");
  accepted.server_clock_ns = get_optional_uint(message, "server_clock_ns");
  return accepted;
}

json start_message() { return {{"type", "start"}}; }

json stop_message() { return {{"type", "stop"}}; }

namespace {
bool has_type(const json& message, const char* name) noexcept {
  auto type = message.find("type");
  return type != message.end() && type->is_string() && type->get_ref<const std::string&>() == name;
}
}  // namespace

bool is_stop(const json& message) noexcept { return has_type(message, "stop"); }

json queued_message(std::uint32_t ahead) { return {{"type", "queued"}, {"ahead", ahead}}; }

std::optional<std::uint32_t> queued_ahead(const json& message) {
  if (!has_type(message, "queued")) return std::nullopt;
  return static_cast<std::uint32_t>(get_uint(message, "ahead", 0, 1u << 20));
}

json alive_message() { return {{"type", "alive"}}; }

bool is_alive(const json& message) noexcept { return has_type(message, "alive"); }

json error_message(const std::string& message, const std::string& code) {
  return {{"type", "error"}, {"code", code}, {"message", message}};
}

void parse_start(const json& message) { expect_type(message, "start"); }

void fail_unexpected(const json& message, const std::string& during) {
  auto type = message.find("type");
  if (type != message.end() && type->is_string() && *type == "error")
    expect_type(message, "error");  // raises PeerError with the peer's sentence
  throw ProtocolError("unexpected control message " + during);
}

// What each side measured (sender_done, transfers_done, results): every stream's totals, every
// interval, CPU and host figures, built and parsed. The biggest frames of the protocol.
namespace {

// A stream's zero-copy figures under their field names, in one place for both directions.
std::array<std::pair<const char*, std::uint64_t>, 4> zero_copy_fields(const stats::StreamFigures& stream) {
  return {{{"zerocopy_completed", stream.zerocopy_completed},
           {"zerocopy_copied", stream.zerocopy_copied},
           {"recv_zerocopy_bytes", stream.recv_zerocopy_bytes},
           {"recv_copied_bytes", stream.recv_copied_bytes}}};
}

void parse_zero_copy_fields(const json& stream, stats::StreamFigures& figures) {
  figures.zerocopy_completed = get_optional_uint(stream, "zerocopy_completed");
  figures.zerocopy_copied = get_optional_uint(stream, "zerocopy_copied");
  if (figures.zerocopy_copied > figures.zerocopy_completed)
    throw ProtocolError("field \"zerocopy_copied\" cannot exceed \"zerocopy_completed\"");
  figures.recv_zerocopy_bytes = get_optional_uint(stream, "recv_zerocopy_bytes");
  figures.recv_copied_bytes = get_optional_uint(stream, "recv_copied_bytes");
  if (figures.recv_zerocopy_bytes > figures.bytes || figures.recv_copied_bytes > figures.bytes - figures.recv_zerocopy_bytes)
    throw ProtocolError("fields \"recv_zerocopy_bytes\" and \"recv_copied_bytes\" cannot add up to more than \"bytes\"");
}

// What the verdict reads of this side (stats/side_evidence.hpp), compact: per stream an array in
// kEvidenceStreamFields' order, per thread and per counter a [name, value] pair.
json evidence_json(const stats::SideEvidence& evidence) {
  json streams = json::array();
  for (const stats::StreamEnd& end : evidence.streams) {
    const net::TcpInfo& tcp = end.tcp;
    streams.push_back({tcp.valid ? 1 : 0, tcp.chrono ? 1 : 0, tcp.busy_us, tcp.rwnd_limited_us,
                       tcp.sndbuf_limited_us, tcp.min_rtt_us, tcp.snd_wnd, tcp.rcv_space, tcp.bytes_sent,
                       tcp.bytes_retrans, end.app_limited_share});
  }
  json threads = json::array();
  for (const stats::ThreadCpu& thread : evidence.threads) threads.push_back({thread.name, thread.cpu_s, thread.wait_s});
  json tcp_ext = json::array();
  for (const net::NamedCounter& counter : evidence.tcp_ext) tcp_ext.push_back({counter.name, counter.value});
  json message = {{"cpus", evidence.cpus}, {"streams", std::move(streams)}, {"threads", std::move(threads)},
                  {"tcp_ext", std::move(tcp_ext)}, {"missing", evidence.missing}};
  if (const stats::NicDropDelta& nic = evidence.nic; !nic.device.empty())
    message["nic"] = {{"device", nic.device}, {"rx_dropped", nic.drops.rx_dropped}, {"rx_missed", nic.drops.rx_missed},
                      {"rx_fifo", nic.drops.rx_fifo}, {"tx_dropped", nic.drops.tx_dropped}};
  const stats::QdiscDelta& qdisc = evidence.qdisc;
  if (!qdisc.device.empty())
    message["qdisc"] = {{"device", qdisc.device}, {"kind", qdisc.kind}, {"drops", qdisc.drops},
                        {"overlimits", qdisc.overlimits}, {"backlog_bytes", qdisc.backlog_bytes}};
  return message;
}

}  // namespace

json to_json(const SideResults& results, const char* type) {
  // A UDP test's samples all carry datagram figures, a TCP test's none.
  const bool datagrams = std::any_of(results.streams.begin(), results.streams.end(),
                                     [](const stats::StreamFigures& stream) { return stream.udp.any(); });
  json streams = json::array();
  for (const stats::StreamFigures& stream : results.streams) {
    json entry = {{"bytes", stream.bytes},
                  {"calls", stream.calls},
                  {"start_s", stream.start_s},
                  {"end_s", stream.end_s},
                  {"failed", stream.failed}};
    // Zero-copy figures only where a mode produced them, so other streams read as before.
    for (const auto& [name, value] : zero_copy_fields(stream))
      if (value) entry[name] = value;
    if (stream.udp.any()) entry["udp"] = datagram_json(stream.udp);
    if (stream.udp.any() && stream.delay.any()) entry["udp"]["delay_ns"] = delay_json(stream.delay);
    streams.push_back(std::move(entry));
  }
  json intervals = json::array();
  for (const stats::IntervalRecord& record : results.intervals) {
    // Per stream a compact array; see kIntervalFields for the order.
    json samples = json::array();
    for (const stats::StreamSample& sample : record.streams) {
      json entry = {sample.bytes, sample.calls, sample.tcp.valid ? 1 : 0, sample.tcp.rtt_us,
                    sample.tcp.rttvar_us, sample.tcp.snd_cwnd_bytes, sample.tcp.total_retrans,
                    sample.tcp.pmtu, sample.tcp.delivery_rate_bps};
      if (datagrams) append_datagram_sample(sample.udp, entry);
      samples.push_back(std::move(entry));
    }
    json entry = {{"start_s", record.start_s},
                  {"end_s", record.end_s},
                  {"omitted", record.omitted},
                  {"streams", std::move(samples)}};
    if (!record.nics.empty()) {
      // Per NIC a compact array; see kNicFields for the order.
      json nics = json::array();
      for (const stats::NicSample& nic : record.nics)
        nics.push_back({nic.name, nic.moved.rx_bytes, nic.moved.tx_bytes, nic.moved.rx_packets, nic.moved.tx_packets});
      entry["nics"] = std::move(nics);
    }
    intervals.push_back(std::move(entry));
  }
  json message = {{"type", type},
                  {"streams", std::move(streams)},
                  {"intervals", std::move(intervals)},
                  {"cpu", {{"user_s", results.cpu.user_s}, {"system_s", results.cpu.system_s}, {"wall_s", results.wall_s}}},
                  {"congestion", results.congestion},
                  {"tests_beside", results.tests_beside},
                  {"digests", results.digests}};
  if (!results.nics_reason.empty()) message["nics_reason"] = results.nics_reason;
  if (!results.paths.empty()) {
    json paths = json::array();
    for (const net::FlowPath& path : results.paths) paths.push_back({path.device, path.how});
    message["paths"] = std::move(paths);
  }
  if (!results.incoming_cpus.empty()) message["incoming_cpus"] = results.incoming_cpus;
  if (!results.worker_cpus.empty()) message["worker_cpus"] = results.worker_cpus;
  if (!results.mptcp_subflows.empty()) message["mptcp_subflows"] = results.mptcp_subflows;
  if (!results.cores.empty()) {
    json cores = json::array();
    for (const stats::CoreShare& core : results.cores) cores.push_back({core.cpu, core.busy, core.softirq});
    message["cores"] = std::move(cores);
  }
  if (results.evidence.present()) message["evidence"] = evidence_json(results.evidence);
  return message;
}

json to_json(const DirectedResults& results, const char* type) {
  json message = to_json(results.forward, type);
  if (results.reverse) message["reverse"] = to_json(*results.reverse, "reverse");
  return message;
}

namespace {

constexpr const char* kIntervalFields =
    "[bytes, calls, tcp_valid, rtt_us, rttvar_us, snd_cwnd_bytes, total_retrans, pmtu, delivery_rate_bps], "
    "and for UDP [datagrams, lost, out_of_order, duplicates, socket_drops, strays, jitter_ns] after them";
constexpr std::size_t kTcpSampleFields = 9;

stats::StreamSample parse_sample(const json& sample) {
  if (!sample.is_array() ||
      (sample.size() != kTcpSampleFields && sample.size() != kTcpSampleFields + kDatagramSampleFields))
    throw ProtocolError(std::string("an interval stream sample must be ") + kIntervalFields);
  for (const json& value : sample)
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
      throw ProtocolError("interval stream samples hold whole numbers >= 0");
  auto u32 = [&](std::size_t i) {
    std::uint64_t value = sample[i].get<std::uint64_t>();
    if (value > UINT32_MAX) throw ProtocolError("an interval stream sample field is out of range");
    return static_cast<std::uint32_t>(value);
  };
  stats::StreamSample parsed;
  parsed.bytes = sample[0].get<std::uint64_t>();
  parsed.calls = sample[1].get<std::uint64_t>();
  parsed.tcp.valid = sample[2].get<std::uint64_t>() != 0;
  parsed.tcp.rtt_us = u32(3);
  parsed.tcp.rttvar_us = u32(4);
  parsed.tcp.snd_cwnd_bytes = u32(5);
  parsed.tcp.total_retrans = u32(6);
  parsed.tcp.pmtu = u32(7);
  parsed.tcp.delivery_rate_bps = sample[8].get<std::uint64_t>();
  if (sample.size() > kTcpSampleFields) parsed.udp = parse_datagram_sample(sample, kTcpSampleFields);
  return parsed;
}

constexpr const char* kNicFields = "[name, rx_bytes, tx_bytes, rx_packets, tx_packets]";

// Optional (older peers send none): what each watched NIC moved during the interval.
std::vector<stats::NicSample> parse_nics(const json& record) {
  std::vector<stats::NicSample> nics;
  auto list = record.find("nics");
  if (list == record.end()) return nics;
  if (!list->is_array() || list->size() > net::kMaxNics)
    throw ProtocolError("an interval's \"nics\" must list at most " + std::to_string(net::kMaxNics));
  for (const json& nic : *list) {
    if (!nic.is_array() || nic.size() != 5 || !nic[0].is_string() ||
        !net::is_valid_nic_name(nic[0].get<std::string>()) ||
        !is_count(nic[1]) || !is_count(nic[2]) || !is_count(nic[3]) || !is_count(nic[4]))
      throw ProtocolError(std::string("an interval NIC sample must be ") + kNicFields);
    nics.push_back({nic[0].get<std::string>(),
                    {nic[1].get<std::uint64_t>(), nic[2].get<std::uint64_t>(), nic[3].get<std::uint64_t>(),
                     nic[4].get<std::uint64_t>()}});
  }
  return nics;
}

// Optional: [cpu, busy, softirq] per CPU, shares from 0 to 1.
std::vector<stats::CoreShare> parse_cores(const json& message) {
  std::vector<stats::CoreShare> cores;
  auto list = message.find("cores");
  if (list == message.end()) return cores;
  if (!list->is_array() || list->size() > stats::kMaxCores)
    throw ProtocolError("\"cores\" must list at most " + std::to_string(stats::kMaxCores) + " CPUs");
  for (const json& core : *list) {
    if (!core.is_array() || core.size() != 3 || !is_count(core[0]) || core[0].get<std::uint64_t>() >= stats::kMaxCores ||
        !core[1].is_number() || !core[2].is_number())
      throw ProtocolError("each entry of \"cores\" must be [cpu, busy, softirq]");
    double busy = core[1].get<double>(), softirq = core[2].get<double>();
    if (!(busy >= 0 && busy <= 1) || !(softirq >= 0 && softirq <= 1))
      throw ProtocolError("a CPU's busy and softirq shares must lie between 0 and 1");
    cores.push_back({static_cast<std::uint32_t>(core[0].get<std::uint64_t>()), busy, softirq});
  }
  return cores;
}

// Optional: [device, how] per stream, in stream order.
std::vector<net::FlowPath> parse_paths(const json& message, std::uint32_t expected_streams) {
  std::vector<net::FlowPath> paths;
  auto list = message.find("paths");
  if (list == message.end()) return paths;
  if (!list->is_array() || list->size() != expected_streams)
    throw ProtocolError("\"paths\" must list one [device, how] per stream");
  for (const json& path : *list) {
    if (!path.is_array() || path.size() != 2 || !path[0].is_string() || !path[1].is_string() ||
        (!net::is_valid_nic_name(path[0].get<std::string>()) && path[0].get<std::string>() != net::kUnknownDevice) ||
        path[1].get_ref<const std::string&>().size() > net::kMaxPathHow)
      throw ProtocolError("each entry of \"paths\" must be [interface name, how], the how at most " +
                          std::to_string(net::kMaxPathHow) + " characters");
    paths.push_back({path[0].get<std::string>(), path[1].get<std::string>()});
  }
  return paths;
}

// Optional: a CPU number per stream, -1 where there is none.
// A list of one number per stream from `lowest` to `highest` (`each` says what one is), or none.
std::vector<int> parse_per_stream(const json& message, const char* name, std::uint32_t expected_streams,
                                  std::int64_t lowest, std::int64_t highest, const char* each) {
  std::vector<int> numbers;
  auto list = message.find(name);
  if (list == message.end()) return numbers;
  if (!list->is_array() || list->size() != expected_streams)
    throw ProtocolError("\"" + std::string(name) + "\" must list one number per stream");
  for (const json& number : *list) {
    if (!number.is_number_integer() || number.get<std::int64_t>() < lowest || number.get<std::int64_t>() > highest)
      throw ProtocolError("each entry of \"" + std::string(name) + "\" must be " + each);
    numbers.push_back(static_cast<int>(number.get<std::int64_t>()));
  }
  return numbers;
}

std::vector<int> parse_cpus(const json& message, const char* name, std::uint32_t expected_streams) {
  return parse_per_stream(message, name, expected_streams, -1, static_cast<std::int64_t>(stats::kMaxCores) - 1,
                          "a CPU number, or -1");
}

constexpr const char* kEvidenceStreamFields =
    "[tcp_valid, chrono, busy_us, rwnd_limited_us, sndbuf_limited_us, min_rtt_us, snd_wnd, rcv_space, "
    "bytes_sent, bytes_retrans, app_limited_share]";

stats::StreamEnd parse_stream_end(const json& entry) {
  if (!entry.is_array() || entry.size() != 11 || !entry[10].is_number())
    throw ProtocolError(std::string("each stream of \"evidence\" must be ") + kEvidenceStreamFields);
  for (std::size_t i = 0; i < 10; ++i)
    if (!is_count(entry[i])) throw ProtocolError(std::string("each stream of \"evidence\" must be ") + kEvidenceStreamFields);
  auto u32 = [&entry](std::size_t i) {
    std::uint64_t value = entry[i].get<std::uint64_t>();
    if (value > UINT32_MAX) throw ProtocolError("a 32-bit TCP_INFO figure of \"evidence\" is out of range");
    return static_cast<std::uint32_t>(value);
  };
  stats::StreamEnd end;
  end.tcp.valid = entry[0].get<std::uint64_t>() != 0;
  end.tcp.chrono = entry[1].get<std::uint64_t>() != 0;
  end.tcp.busy_us = entry[2].get<std::uint64_t>();
  end.tcp.rwnd_limited_us = entry[3].get<std::uint64_t>();
  end.tcp.sndbuf_limited_us = entry[4].get<std::uint64_t>();
  end.tcp.min_rtt_us = u32(5);
  end.tcp.snd_wnd = u32(6);
  end.tcp.rcv_space = u32(7);
  end.tcp.bytes_sent = entry[8].get<std::uint64_t>();
  end.tcp.bytes_retrans = entry[9].get<std::uint64_t>();
  end.app_limited_share = entry[10].get<double>();
  if (!(end.app_limited_share >= 0 && end.app_limited_share <= 1))
    throw ProtocolError("an app-limited share of \"evidence\" must lie between 0 and 1");
  return end;
}

// The TcpExt deltas: [name, count] pairs, names at most 32 characters.
std::vector<net::NamedCounter> parse_counters(const json& evidence) {
  std::vector<net::NamedCounter> counters;
  const json& list = field(evidence, "tcp_ext");
  if (!list.is_array() || list.size() > stats::kEvidenceCounters)
    throw ProtocolError("\"tcp_ext\" must list at most " + std::to_string(stats::kEvidenceCounters) + " counters");
  for (const json& pair : list) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() ||
        pair[0].get_ref<const std::string&>().size() > 32 || !is_count(pair[1]))
      throw ProtocolError("each entry of \"tcp_ext\" must be [name, count]");
    counters.push_back({pair[0].get<std::string>(), pair[1].get<std::uint64_t>()});
  }
  return counters;
}

// [name, cpu_s, wait_s] per thread: seconds, not negative, at most a day.
std::vector<stats::ThreadCpu> parse_threads(const json& evidence) {
  std::vector<stats::ThreadCpu> threads;
  const json& list = field(evidence, "threads");
  if (!list.is_array() || list.size() > stats::kMaxEvidenceThreads)
    throw ProtocolError("\"threads\" must list at most " + std::to_string(stats::kMaxEvidenceThreads) + " threads");
  auto seconds = [](const json& value) { return value.is_number() && value.get<double>() >= 0 && value.get<double>() <= 86400; };
  for (const json& thread : list) {
    if (!thread.is_array() || thread.size() != 3 || !thread[0].is_string() ||
        thread[0].get_ref<const std::string&>().size() > 32 || !seconds(thread[1]) || !seconds(thread[2]))
      throw ProtocolError("each entry of \"threads\" must be [name, cpu_s, wait_s]");
    threads.push_back({thread[0].get<std::string>(), thread[1].get<double>(), thread[2].get<double>()});
  }
  return threads;
}

stats::SideEvidence parse_evidence(const json& message, std::uint32_t expected_streams) {
  stats::SideEvidence evidence;
  auto found = message.find("evidence");
  if (found == message.end()) return evidence;  // a peer from before the verdicts
  const json& object = *found;
  if (!object.is_object()) throw ProtocolError("field \"evidence\" must be an object");
  const json& cpus = field(object, "cpus");
  if (!cpus.is_array() || cpus.empty() || cpus.size() > stats::kMaxCores)
    throw ProtocolError("\"evidence\" must list the CPUs the peer may use");
  for (const json& cpu : cpus) {
    if (!is_count(cpu) || cpu.get<std::uint64_t>() >= stats::kMaxCores) throw ProtocolError("a CPU of \"evidence\" is out of range");
    evidence.cpus.push_back(static_cast<std::uint32_t>(cpu.get<std::uint64_t>()));
  }
  const json& streams = field(object, "streams");
  if (!streams.is_array() || streams.size() != expected_streams)
    throw ProtocolError("\"evidence\" must list " + std::to_string(expected_streams) + " streams");
  for (const json& entry : streams) evidence.streams.push_back(parse_stream_end(entry));
  evidence.threads = parse_threads(object);
  evidence.tcp_ext = parse_counters(object);
  const json& missing = field(object, "missing");
  if (!missing.is_array() || missing.size() > stats::kEvidenceCounters)
    throw ProtocolError("\"missing\" of \"evidence\" must list counter names");
  for (const json& name : missing) {
    if (!name.is_string() || name.get_ref<const std::string&>().size() > 32) throw ProtocolError("a missing counter's name must be a short string");
    evidence.missing.push_back(name.get<std::string>());
  }
  if (auto nic = object.find("nic"); nic != object.end()) {
    if (!nic->is_object()) throw ProtocolError("\"nic\" of \"evidence\" must be an object");
    evidence.nic.device = get_string(*nic, "device", 15);
    evidence.nic.drops = {get_uint(*nic, "rx_dropped", 0, UINT64_MAX), get_uint(*nic, "rx_missed", 0, UINT64_MAX),
                          get_uint(*nic, "rx_fifo", 0, UINT64_MAX), get_uint(*nic, "tx_dropped", 0, UINT64_MAX)};
  }
  if (auto qdisc = object.find("qdisc"); qdisc != object.end()) {
    if (!qdisc->is_object()) throw ProtocolError("\"qdisc\" of \"evidence\" must be an object");
    evidence.qdisc.device = get_string(*qdisc, "device", 15);
    evidence.qdisc.kind = get_string(*qdisc, "kind", 32);
    evidence.qdisc.drops = get_uint(*qdisc, "drops", 0, UINT64_MAX);
    evidence.qdisc.overlimits = get_uint(*qdisc, "overlimits", 0, UINT64_MAX);
    evidence.qdisc.backlog_bytes = get_uint(*qdisc, "backlog_bytes", 0, UINT64_MAX);
  }
  return evidence;
}

}  // namespace

SideResults parse_side_results(const json& message, const char* type, std::uint32_t expected_streams) {
  expect_type(message, type);
  const json& streams = field(message, "streams");
  if (!streams.is_array() || streams.size() != expected_streams)
    throw ProtocolError("\"streams\" must list " + std::to_string(expected_streams) + " streams");
  SideResults results;
  results.streams.reserve(expected_streams);
  for (const json& stream : streams) {
    if (!stream.is_object()) throw ProtocolError("each entry of \"streams\" must be an object");
    stats::StreamFigures figures;
    figures.bytes = get_uint(stream, "bytes", 0, UINT64_MAX);
    figures.calls = get_uint(stream, "calls", 0, UINT64_MAX);
    figures.start_s = get_double(stream, "start_s", 0, 1e7);
    figures.end_s = get_double(stream, "end_s", 0, 1e7);
    const json& failed = field(stream, "failed");
    if (!failed.is_boolean()) throw ProtocolError("field \"failed\" must be true or false");
    figures.failed = failed.get<bool>();
    parse_zero_copy_fields(stream, figures);
    figures.udp = parse_datagrams(stream);
    figures.delay = parse_delay(stream);
    results.streams.push_back(figures);
  }
  const json& intervals = field(message, "intervals");
  if (!intervals.is_array() || intervals.size() > kMaxIntervals)
    throw ProtocolError("\"intervals\" must be a list of at most " + std::to_string(kMaxIntervals));
  for (const json& record : intervals) {
    if (!record.is_object()) throw ProtocolError("each interval must be an object");
    stats::IntervalRecord parsed;
    parsed.start_s = get_double(record, "start_s", 0, 1e7);
    parsed.end_s = get_double(record, "end_s", parsed.start_s, 1e7);
    const json& omitted = field(record, "omitted");
    if (!omitted.is_boolean()) throw ProtocolError("field \"omitted\" must be true or false");
    parsed.omitted = omitted.get<bool>();
    const json& samples = field(record, "streams");
    if (!samples.is_array() || samples.size() != expected_streams)
      throw ProtocolError("each interval must list " + std::to_string(expected_streams) + " streams");
    for (const json& sample : samples) parsed.streams.push_back(parse_sample(sample));
    parsed.nics = parse_nics(record);
    results.intervals.push_back(std::move(parsed));
  }
  const json& cpu = field(message, "cpu");
  if (!cpu.is_object()) throw ProtocolError("field \"cpu\" must be an object");
  results.cpu.user_s = get_double(cpu, "user_s", 0, 1e9);
  results.cpu.system_s = get_double(cpu, "system_s", 0, 1e9);
  results.wall_s = get_double(cpu, "wall_s", 0, 1e9);
  results.congestion = get_string(message, "congestion", 32);
  results.tests_beside = static_cast<std::uint32_t>(get_uint(message, "tests_beside", 0, 1u << 20));
  if (message.contains("digests")) {
    const json& digests = message["digests"];
    if (!digests.is_array() || (!digests.empty() && digests.size() != expected_streams))
      throw ProtocolError("\"digests\" must list one digest per stream");
    for (const json& digest : digests) {
      // SHA-256 is 64 hex digits; anything else is not a digest this build knows.
      if (!digest.is_string() || digest.get_ref<const std::string&>().size() > 128)
        throw ProtocolError("each entry of \"digests\" must be a hex string");
      results.digests.push_back(digest.get<std::string>());
    }
  }
  results.cores = parse_cores(message);
  if (message.contains("nics_reason")) results.nics_reason = get_string(message, "nics_reason", net::kMaxNicsReason);
  results.paths = parse_paths(message, expected_streams);
  results.incoming_cpus = parse_cpus(message, "incoming_cpus", expected_streams);
  results.worker_cpus = parse_cpus(message, "worker_cpus", expected_streams);
  // MPTCP_INFO's count is a byte, plus the first subflow.
  results.mptcp_subflows = parse_per_stream(message, "mptcp_subflows", expected_streams, 0, 256, "a subflow count");
  results.evidence = parse_evidence(message, expected_streams);
  return results;
}

DirectedResults parse_directed_results(const json& message, const char* type, std::uint32_t forward_streams,
                                       std::uint32_t reverse_streams) {
  DirectedResults results;
  results.forward = parse_side_results(message, type, forward_streams);
  auto reverse = message.find("reverse");
  if (reverse_streams == 0) {
    if (reverse != message.end()) throw ProtocolError("\"reverse\" figures arrived for a test that runs forward only");
    return results;
  }
  if (reverse == message.end() || !reverse->is_object())
    throw ProtocolError("the figures of the reverse direction (\"reverse\") are missing");
  results.reverse = parse_side_results(*reverse, "reverse", reverse_streams);
  return results;
}

std::uint64_t figures_frame_bound(std::uint32_t streams, std::uint64_t intervals) noexcept {
  // A stream's totals with every optional field at 20 digits (a UDP flow's seven under their
  // names too), and its digest; a sample of 9 numbers (16 for UDP) of 20 digits at most; an interval's own fields and up to 16 NICs of 5 values each; the rest
  // of the message (CPU, cores for 1024 CPUs, the NICs' reason, the reverse direction's header).
  // A path's how is at most kMaxPathHow characters, each escaped to 6 at worst. The evidence: a
  // stream's 11 numbers; the rest of it (1024 CPUs, 64 threads and 7 counters, names escaped at
  // worst, the qdisc) in the message's share.
  constexpr std::uint64_t kStreamBytes =
      512 + 160 + 7 * 40 + 100 + net::kMaxNicName + 6 * net::kMaxPathHow + 16 + 2 * 6 + 11 * 21 + 4;
  constexpr std::uint64_t kSampleBytes = 16 * 21 + 2;
  constexpr std::uint64_t kIntervalBytes = 128 + 16 * (net::kMaxNicName + 5 * 21 + 8);
  constexpr std::uint64_t kMessageBytes = 64 * 1024 + 1024 * 6 + 71 * (6 * 32 + 30) + 512;
  return kMessageBytes + streams * kStreamBytes + intervals * (kIntervalBytes + streams * kSampleBytes);
}

// A UDP flow's datagram figures on the wire (results frames): a stream's "udp" object and the
// seven numbers an interval sample carries after its TCP ones. Written only for UDP flows, so
// other streams read as before.
namespace {

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

namespace testio::control::fields {

void expect_type(const json& message, const char* type) {
  auto it = message.find("type");
  if (it == message.end() || !it->is_string())
    throw ProtocolError("control message has no \"type\" string");
  const std::string& actual = it->get_ref<const std::string&>();
  if (actual == "error") {
    auto text = message.find("message");
    auto code = message.find("code");
    throw PeerError(text != message.end() && text->is_string() ? text->get<std::string>()
                                                                : "unspecified error",
                    code != message.end() && code->is_string() ? code->get<std::string>() : "");
  }
  if (actual != type)
    throw ProtocolError("expected a \"" + std::string(type) + "\" message, got \"" + actual + "\"");
}

const json& field(const json& message, const char* name) {
  auto it = message.find(name);
  if (it == message.end()) throw ProtocolError(std::string("field \"") + name + "\" is missing");
  return *it;
}

std::uint64_t get_uint(const json& message, const char* name, std::uint64_t min, std::uint64_t max) {
  const json& value = field(message, name);
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    throw ProtocolError(std::string("field \"") + name + "\" must be a whole number >= 0");
  auto number = value.get<std::uint64_t>();
  if (number < min || number > max)
    throw ProtocolError(std::string("field \"") + name + "\" = " + std::to_string(number) +
                        " is outside " + std::to_string(min) + ".." + std::to_string(max));
  return number;
}

double get_double(const json& message, const char* name, double min, double max) {
  const json& value = field(message, name);
  if (!value.is_number()) throw ProtocolError(std::string("field \"") + name + "\" must be a number");
  auto number = value.get<double>();
  if (!std::isfinite(number) || number < min || number > max)
    throw ProtocolError(std::string("field \"") + name + "\" = " + value.dump() + " is outside " +
                        std::to_string(min) + ".." + std::to_string(max));
  return number;
}

std::uint64_t get_optional_uint(const json& message, const char* name) {
  return message.contains(name) ? get_uint(message, name, 0, UINT64_MAX) : 0;
}

std::string get_string(const json& message, const char* name, std::size_t max_length) {
  const json& value = field(message, name);
  if (!value.is_string()) throw ProtocolError(std::string("field \"") + name + "\" must be a string");
  auto text = value.get<std::string>();
  if (text.size() > max_length) throw ProtocolError(std::string("field \"") + name + "\" is too long");
  return text;
}

std::vector<std::uint32_t> get_cpus(const json& message, const char* name) {
  std::vector<std::uint32_t> cpus;
  auto it = message.find(name);
  if (it == message.end()) return cpus;
  if (!it->is_array() || it->size() > 1024)
    throw ProtocolError(std::string("field \"") + name + "\" must be a list of at most 1024 CPUs");
  for (const json& cpu : *it) {
    if (!cpu.is_number_unsigned() || cpu.get<std::uint64_t>() >= 1024)
      throw ProtocolError(std::string("field \"") + name + "\" holds CPU numbers 0..1023");
    cpus.push_back(cpu.get<std::uint32_t>());
  }
  return cpus;
}

bool is_count(const json& value) noexcept {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

}  // namespace testio::control::fields

namespace testio::control {

std::string encode_frame(const nlohmann::json& message) {
  std::string body = message.dump();
  std::string frame(kFrameHeaderBytes, '\0');
  auto length = static_cast<std::uint32_t>(body.size());
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i)
    frame[i] = static_cast<char>((length >> (8 * (kFrameHeaderBytes - 1 - i))) & 0xff);
  frame += body;
  return frame;
}

std::string error_frame(const std::string& message, const std::string& code) {
  return encode_frame(error_message(message, code));
}

DecodedFrame decode_frame(std::string_view input, std::uint32_t max_body, nlohmann::json& message) noexcept {
  DecodedFrame result;
  if (input.size() < kFrameHeaderBytes) return result;
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i)
    length = (length << 8) | static_cast<unsigned char>(input[i]);
  if (length > max_body) {
    result.status = DecodedFrame::Status::too_large;
    result.error = "control frame of " + std::to_string(length) + " bytes is above the cap of " +
                   std::to_string(max_body);
    return result;
  }
  if (input.size() - kFrameHeaderBytes < length) return result;
  std::string_view body = input.substr(kFrameHeaderBytes, length);
  message = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded() || !message.is_object()) {
    result.status = DecodedFrame::Status::malformed;
    result.error = "control frame is not a JSON object";
    return result;
  }
  result.status = DecodedFrame::Status::ok;
  result.consumed = kFrameHeaderBytes + length;
  return result;
}

namespace {

void put_be(unsigned char* out, std::uint64_t value, int bytes) noexcept {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<unsigned char>(value & 0xff);
    value >>= 8;
  }
}

std::uint64_t get_be(const unsigned char* in, int bytes) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

}  // namespace

PreambleBytes encode_preamble(const Preamble& preamble) noexcept {
  PreambleBytes bytes{};
  std::memcpy(bytes.data(), kMagic.data(), kMagic.size());
  bytes[4] = static_cast<unsigned char>(preamble.kind);
  bytes[5] = preamble.version;
  put_be(&bytes[8], preamble.test_id, 8);
  put_be(&bytes[16], preamble.stream, 4);
  return bytes;
}

bool starts_with_magic(const unsigned char* bytes, std::size_t size) noexcept {
  return size >= kMagic.size() && std::memcmp(bytes, kMagic.data(), kMagic.size()) == 0;
}

DecodedPreamble decode_preamble(const PreambleBytes& bytes) noexcept {
  DecodedPreamble decoded;
  if (!starts_with_magic(bytes.data(), bytes.size())) {
    decoded.status = DecodedPreamble::Status::not_testio;
    return decoded;
  }
  decoded.preamble.version = bytes[5];
  if (bytes[5] != kProtocolVersion) {
    decoded.status = DecodedPreamble::Status::bad_version;
    return decoded;
  }
  if (bytes[4] != static_cast<unsigned char>(ConnectionKind::control) &&
      bytes[4] != static_cast<unsigned char>(ConnectionKind::data)) {
    decoded.status = DecodedPreamble::Status::bad_kind;
    return decoded;
  }
  decoded.preamble.kind = static_cast<ConnectionKind>(bytes[4]);
  decoded.preamble.test_id = get_be(&bytes[8], 8);
  decoded.preamble.stream = static_cast<std::uint32_t>(get_be(&bytes[16], 4));
  return decoded;
}

}  // namespace testio::control
