#include "control/protocol.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <utility>

namespace testio::control {
namespace {

using nlohmann::json;

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

// Raises PeerError for an error frame, ProtocolError for any other unexpected type.
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

// CPU numbers below 1024, at most 1024 of them (an optional field: absent is empty).
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

// A whole number that older peers leave out: absent is 0.
std::uint64_t get_optional_uint(const json& message, const char* name) {
  return message.contains(name) ? get_uint(message, name, 0, UINT64_MAX) : 0;
}

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

std::string get_string(const json& message, const char* name, std::size_t max_length) {
  const json& value = field(message, name);
  if (!value.is_string()) throw ProtocolError(std::string("field \"") + name + "\" must be a string");
  auto text = value.get<std::string>();
  if (text.size() > max_length) throw ProtocolError(std::string("field \"") + name + "\" is too long");
  return text;
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
  json message = {{"type", "test_request"},
          {"connections", request.connections},
          {"duration_s", request.duration_s},
          {"total_bytes", request.total_bytes},
          {"threads", request.threads},
          {"client_threads", request.client_threads},
          {"buffer", request.buffer},
          {"window", request.window},
          {"recv_mode", config::to_string(request.recv_mode)},
          {"interval_s", request.interval_s},
          {"workload", request.transfers ? "transfers" : request.rr ? "rr" : "stream"},
          {"transfers", request.transfers},
          {"transfer_size", request.transfer_size},
          {"reuse", request.reuse},
          {"hash", util::to_string(request.hash)},
          {"congestion", request.congestion},
          {"no_delay", request.no_delay},
          {"cpus", request.cpus},
          {"msize", request.msize},
          {"depth", request.depth},
          {"omit_s", request.omit_s},
          {"client_version", request.client_version},
          {"auth", request.auth}};
  if (request.iface_stats) message["iface_stats"] = request.iface_names;
  // Absent when default, so a request reads as it did before these existed.
  if (request.engine != config::Engine::asio) message["engine"] = config::to_string(request.engine);
  if (!request.rate_lowat) message["rate_lowat"] = false;
  if (request.direction != config::Direction::forward) {
    message["direction"] = config::to_string(request.direction);
    message["send_mode"] = config::to_string(request.send_mode);
    message["rate_bps"] = request.rate_bps;
    message["fq_rate_bps"] = request.fq_rate_bps;
  }
  return message;
}

json to_json(const TestAccepted& accepted) {
  return {{"type", "test_accepted"},
          {"test_id", accepted.test_id},
          {"server_threads", accepted.server_threads},
          {"server_cpus", accepted.server_cpus},
          {"server_version", accepted.server_version}};
}

json to_json(const SideResults& results, const char* type) {
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
    streams.push_back(std::move(entry));
  }
  json intervals = json::array();
  for (const stats::IntervalRecord& record : results.intervals) {
    // Per stream a compact array; see kIntervalFields for the order.
    json samples = json::array();
    for (const stats::StreamSample& sample : record.streams)
      samples.push_back({sample.bytes, sample.calls, sample.tcp.valid ? 1 : 0, sample.tcp.rtt_us,
                         sample.tcp.rttvar_us, sample.tcp.snd_cwnd_bytes, sample.tcp.total_retrans,
                         sample.tcp.pmtu, sample.tcp.delivery_rate_bps});
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
  if (!results.cores.empty()) {
    json cores = json::array();
    for (const stats::CoreShare& core : results.cores) cores.push_back({core.cpu, core.busy, core.softirq});
    message["cores"] = std::move(cores);
  }
  return message;
}

json to_json(const DirectedResults& results, const char* type) {
  json message = to_json(results.forward, type);
  if (results.reverse) message["reverse"] = to_json(*results.reverse, "reverse");
  return message;
}

json start_message() { return {{"type", "start"}}; }

json stop_message() { return {{"type", "stop"}}; }

bool is_stop(const json& message) noexcept {
  auto type = message.find("type");
  return type != message.end() && type->is_string() && type->get<std::string>() == "stop";
}

json error_message(const std::string& message, const std::string& code) {
  return {{"type", "error"}, {"code", code}, {"message", message}};
}

TestRequest parse_test_request(const json& message, const config::Limits& limits) {
  expect_type(message, "test_request");
  TestRequest request;
  request.connections =
      static_cast<std::uint32_t>(get_uint(message, "connections", 1, limits.max_connections));
  request.total_bytes = get_uint(message, "total_bytes", 0, UINT64_MAX);
  request.duration_s = get_double(message, "duration_s", 0, limits.max_duration_s);
  // (An rr test may instead count messages, which only the client tracks.)
  request.threads = static_cast<std::uint32_t>(get_uint(message, "threads", 0, limits.max_threads));
  request.client_threads =
      static_cast<std::uint32_t>(get_uint(message, "client_threads", 1, limits.max_threads));
  request.buffer = get_uint(message, "buffer", 1, limits.max_buffer);
  request.window = get_uint(message, "window", 0, limits.max_window);
  std::string mode = get_string(message, "recv_mode", 32);
  auto recv_mode = config::recv_mode_from_string(mode);
  if (!recv_mode) throw ProtocolError("recv_mode \"" + mode + "\" is not supported");
  request.recv_mode = *recv_mode;
  request.interval_s = get_double(message, "interval_s", 0, limits.max_duration_s);
  if (request.interval_s > 0 && request.interval_s < limits.min_interval_s)
    throw ProtocolError("interval_s must be 0 or at least " + std::to_string(limits.min_interval_s));
  request.omit_s = get_double(message, "omit_s", 0, limits.max_duration_s);
  std::string workload = get_string(message, "workload", 16);
  if (workload != "stream" && workload != "rr" && workload != "transfers")
    throw ProtocolError("workload \"" + workload + "\" is not supported");
  request.rr = workload == "rr";
  if (workload == "transfers") {
    request.transfers = get_uint(message, "transfers", 1, limits.max_transfers);
    request.transfer_size = get_uint(message, "transfer_size", 1, limits.max_transfer_size);
    const json& reuse = field(message, "reuse");
    if (!reuse.is_boolean()) throw ProtocolError("field \"reuse\" must be true or false");
    request.reuse = reuse.get<bool>();
  }
  if (message.contains("hash")) {
    std::string hash = get_string(message, "hash", 16);
    auto kind = util::hash_from_string(hash);
    if (!kind) throw ProtocolError("hash \"" + hash + "\" is not supported");
    // Both discard the bytes without this process seeing them, so there is nothing to hash.
    if (*kind != util::HashKind::none &&
        (request.recv_mode == config::RecvMode::trunc || request.recv_mode == config::RecvMode::splice))
      throw ProtocolError("a hashed test cannot use recv_mode " + std::string(config::to_string(request.recv_mode)));
    request.hash = *kind;
  }
  request.msize = get_uint(message, "msize", 0, limits.max_buffer);
  request.depth = static_cast<std::uint32_t>(get_uint(message, "depth", 1, 1u << 16));
  if (request.rr && request.msize == 0) throw ProtocolError("an rr test needs msize > 0");
  if (!request.rr && !request.transfers && request.total_bytes == 0 && request.duration_s <= 0)
    throw ProtocolError("a test needs duration_s > 0 or total_bytes > 0");
  if (message.contains("congestion")) {
    request.congestion = get_string(message, "congestion", 15);
    if (request.congestion.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
      throw ProtocolError("field \"congestion\" is not a congestion control name");
  }
  if (message.contains("no_delay")) {
    const json& no_delay = message["no_delay"];
    if (!no_delay.is_boolean()) throw ProtocolError("field \"no_delay\" must be true or false");
    request.no_delay = no_delay.get<bool>();
  }
  request.cpus = get_cpus(message, "cpus");
  if (message.contains("engine")) {
    std::string name = get_string(message, "engine", 16);
    auto engine = config::engine_from_string(name);
    if (!engine) throw ProtocolError("engine \"" + name + "\" is not supported");
    request.engine = *engine;
  }
  if (message.contains("rate_lowat")) {
    const json& rate_lowat = message["rate_lowat"];
    if (!rate_lowat.is_boolean()) throw ProtocolError("field \"rate_lowat\" must be true or false");
    request.rate_lowat = rate_lowat.get<bool>();
  }
  if (message.contains("direction")) {
    std::string name = get_string(message, "direction", 16);
    auto direction = config::direction_from_string(name);
    if (!direction) throw ProtocolError("direction \"" + name + "\" is not supported");
    request.direction = *direction;
    if (request.direction != config::Direction::forward) {
      if (request.rr || request.transfers) throw ProtocolError("only a bulk test runs reverse or bidir");
      if (request.hash != util::HashKind::none) throw ProtocolError("a hashed (-F) test runs forward only");
      if (request.direction == config::Direction::bidir && request.connections > limits.max_connections / 2)
        throw ProtocolError("a bidir test opens twice its connections: at most " +
                            std::to_string(limits.max_connections / 2));
      std::string send = get_string(message, "send_mode", 16);
      auto send_mode = config::send_mode_from_string(send);
      if (!send_mode) throw ProtocolError("send_mode \"" + send + "\" is not supported");
      request.send_mode = *send_mode;
      request.rate_bps = get_double(message, "rate_bps", 0, 1e15);
      request.fq_rate_bps = get_double(message, "fq_rate_bps", 0, 1e15);
    }
  }
  if (std::string refusal = config::engine_refusal(request.engine, request.recv_mode, request.send_mode);
      !refusal.empty())
    throw ProtocolError(refusal);
  request.client_version = get_string(message, "client_version", 64);
  request.auth = get_string(message, "auth", 128);
  if (auto names = message.find("iface_stats"); names != message.end()) {
    if (!names->is_array() || names->size() > net::kMaxNics)
      throw ProtocolError("\"iface_stats\" must list at most " + std::to_string(net::kMaxNics) + " interface names");
    request.iface_stats = true;
    for (const json& name : *names) {
      if (!name.is_string() || !net::is_valid_nic_name(name.get<std::string>()))
        throw ProtocolError("\"iface_stats\" holds something that is not an interface name");
      request.iface_names.push_back(name.get<std::string>());
    }
  }
  return request;
}

TestAccepted parse_test_accepted(const json& message, const config::Limits& limits) {
  expect_type(message, "test_accepted");
  TestAccepted accepted;
  accepted.test_id = get_uint(message, "test_id", 1, UINT64_MAX);
  accepted.server_threads =
      static_cast<std::uint32_t>(get_uint(message, "server_threads", 1, limits.max_threads));
  accepted.server_version = get_string(message, "server_version", 64);
  accepted.server_cpus = get_cpus(message, "server_cpus");
  return accepted;
}

namespace {

constexpr const char* kIntervalFields =
    "[bytes, calls, tcp_valid, rtt_us, rttvar_us, snd_cwnd_bytes, total_retrans, pmtu, delivery_rate_bps]";

stats::StreamSample parse_sample(const json& sample) {
  if (!sample.is_array() || sample.size() != 9)
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
  return parsed;
}

constexpr const char* kNicFields = "[name, rx_bytes, tx_bytes, rx_packets, tx_packets]";

bool is_count(const json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

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

void parse_start(const json& message) { expect_type(message, "start"); }

void fail_unexpected(const json& message, const std::string& during) {
  auto type = message.find("type");
  if (type != message.end() && type->is_string() && *type == "error")
    expect_type(message, "error");  // raises PeerError with the peer's sentence
  throw ProtocolError("unexpected control message " + during);
}

}  // namespace testio::control
