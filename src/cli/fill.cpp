#include "cli/fill.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "net/nic_counters.hpp"
#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

// The option's text when it was typed (or came from a profile's tokens).
std::optional<std::string> typed(const cxxopts::ParseResult& args, const char* name) {
  if (!args.count(name)) return std::nullopt;
  return args[name].as<std::string>();
}

std::uint32_t parse_u32(const std::string& text, const char* what) {
  std::uint64_t value = util::parse_count(text, what);
  if (value > 0xffffffffull) throw UsageError(std::string(what) + " '" + text + "' is too large");
  return static_cast<std::uint32_t>(value);
}

template <typename Enum, typename Parse>
Enum parse_name(const std::string& text, Parse parse, const std::string& refusal) {
  auto value = parse(text);
  if (!value) throw UsageError(refusal);
  return *value;
}

void fill_connections(const cxxopts::ParseResult& args, spec::TestSpec& spec, GivenOptions& given) {
  std::optional<std::uint32_t> positional;
  if (args.count("connections")) {
    const auto& values = args["connections"].as<std::vector<std::string>>();
    if (values.size() > 1) throw UsageError("unexpected argument '" + values[1] + "': give one connection count");
    positional = parse_u32(values[0], "the connection count");
  }
  std::optional<std::uint32_t> parallel;
  if (auto text = typed(args, "parallel")) parallel = parse_u32(*text, "-P/--parallel");
  if (positional && parallel && *positional != *parallel)
    throw UsageError("the connection count is given twice (" + std::to_string(*positional) + " and -P " +
                     std::to_string(*parallel) + "); give one");
  if (positional || parallel) {
    spec.connections = positional ? *positional : *parallel;
    given.connections = true;
  }
}

void fill_address(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  given.server = args.count("server") > 0;
  given.client = args.count("client") > 0;
  if (given.client) config.host = args["client"].as<std::string>();
  config.role = given.server ? config::Role::server : config::Role::client;
  config.verbosity = args.count("debug") ? 2 : args.count("verbose") ? 1 : 0;
  std::uint64_t port = util::parse_count(args["port"].as<std::string>(), "the port");
  if (port > 65535) throw UsageError("the port must be between 0 and 65535, got " + std::to_string(port));
  config.port = static_cast<std::uint16_t>(port);
  given.ipv4 = args.count("ipv4") > 0;
  given.ipv6 = args.count("ipv6") > 0;
  config.family = given.ipv4 ? config::AddressFamily::v4 : given.ipv6 ? config::AddressFamily::v6
                                                                       : config::AddressFamily::any;
  config.one_off = given.one_off = args.count("one-off") > 0;
}

// -B ADDRESS[%DEV] or -B %DEV. An IPv6 link-local address keeps its %scope as part of the address
// too, since it names the interface the same way.
void fill_bind(const std::string& text, config::Config& config) {
  const std::size_t percent = text.rfind('%');
  if (percent == std::string::npos) {
    config.bind_address = text;
    return;
  }
  config.bind_device = text.substr(percent + 1);
  const std::string address = text.substr(0, percent);
  config.bind_address = address.rfind("fe80", 0) == 0 || address.rfind("FE80", 0) == 0 ? text : address;
  // IFNAMSIZ is 16 with its terminating NUL.
  if (config.bind_device.empty() || config.bind_device.size() > 15 || config.bind_device.find('/') != std::string::npos)
    throw UsageError("-B '" + text + "': '" + config.bind_device + "' is not a network interface name");
}

void fill_output(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  given.json = args.count("json") > 0;
  given.json_stream = args.count("json-stream") > 0;
  config.output = given.json_stream ? config::OutputFormat::json_stream
                  : given.json      ? config::OutputFormat::json
                                    : config::OutputFormat::text;
  if (auto unit = typed(args, "format")) {
    if (unit->size() != 1 || !util::is_rate_unit((*unit)[0]))
      throw UsageError("-f/--format '" + *unit + "' is not one of k, m, g, K, M, G");
    config.unit = (*unit)[0];
  }
  if (auto file = typed(args, "logfile")) config.logfile = *file;
}

void fill_limits(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  spec::Limits& limits = config.limits;
  limits.max_tests = parse_u32(args["max-tests"].as<std::string>(), "--max-tests");
  limits.max_connections = parse_u32(args["max-connections"].as<std::string>(), "--max-connections");
  limits.max_buffer = util::parse_size(args["max-buffer"].as<std::string>(), "--max-buffer");
  limits.max_duration_s = util::parse_seconds(args["max-duration"].as<std::string>(), "--max-duration");
  std::uint64_t frame = util::parse_size(args["max-frame"].as<std::string>(), "--max-frame");
  if (frame < 4096 || frame > (16u << 20)) throw UsageError("--max-frame must be between 4K and 16M");
  limits.max_frame = static_cast<std::uint32_t>(frame);
  limits.handshake_timeout_s = util::parse_seconds(args["handshake-timeout"].as<std::string>(), "--handshake-timeout");
  given.server_limits = args["max-tests"].count() || args["handshake-timeout"].count() || args["max-frame"].count() ||
                        args.count("allow");
  if (auto allow = typed(args, "allow")) config.allow = *allow;
  if (auto key = typed(args, "psk-file")) config.psk_file = *key;
  given.psk_file = !config.psk_file.empty();
}

// --raw, -F and --hash: a digest is computed where a file is sent (-F) or a raw peer sends.
void fill_raw(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  config.raw = given.raw = args.count("raw") > 0;
  given.hash = args["hash"].count() > 0;
  const std::string hash = args["hash"].as<std::string>();
  const util::HashKind kind =
      parse_name<util::HashKind>(hash, util::hash_from_string, "--hash '" + hash + "' is not one of sha1, sha256, none");
  if (auto file = typed(args, "file")) {
    given.file = true;
    config.file = *file;
  }
  // A raw sink and a raw sender hash what crosses; --raw --rr echoes and a testio server sinks.
  const bool hashes = config.raw ? !args.count("rr") : given.file && !args.count("server");
  config.spec.hash = hashes ? kind : util::HashKind::none;
}

void fill_rr(const cxxopts::ParseResult& args, spec::TestSpec& spec, GivenOptions& given) {
  given.rr = args.count("rr") > 0;
  if (given.rr) spec.workload = "rr";
  given.rr_options = args["msize"].count() || args.count("num") || args["depth"].count();
  if (auto size = typed(args, "msize")) spec.rr.message_size = util::parse_size(*size, "--msize");
  if (auto count = typed(args, "num")) {
    given.num = true;
    spec.rr.messages = util::parse_count(*count, "--num");
  }
  if (auto depth = typed(args, "depth")) spec.rr.depth = parse_u32(*depth, "--depth");
}

void fill_transfers(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  if (auto count = typed(args, "transfers")) {
    given.transfers = true;
    spec.workload = "transfers";
    spec.transfers.count = util::parse_count(*count, "--transfers");
  }
  if (auto size = typed(args, "size")) {
    given.size = true;
    spec.transfers.size = util::parse_size(*size, "--size");
  }
  given.reuse = args.count("reuse") > 0;
  if (given.reuse) spec.transfers.reuse = true;
  if (auto dir = typed(args, "save")) {
    given.save = true;
    config.save_dir = *dir;
  }
  config.force = given.force = args.count("force") > 0;
}

void fill_iface_stats(const cxxopts::ParseResult& args, spec::TestSpec& spec, GivenOptions& given) {
  if (!args.count("iface-stats")) return;
  given.iface_stats = true;
  std::string list = args["iface-stats"].as<std::string>();
  // "--iface-stats eth0" leaves eth0 to the positional connection count: say what was meant.
  if (list.empty() && args.count("connections")) {
    const std::string& positional = args["connections"].as<std::vector<std::string>>()[0];
    if (positional.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--iface-stats takes its interfaces after '=': --iface-stats=" + positional);
  }
  std::vector<std::string> names;
  for (std::size_t start = 0; start < list.size();) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    if (name.empty() || !net::is_valid_nic_name(name))
      throw UsageError("--iface-stats '" + list + "' must be interface names separated by commas");
    names.push_back(std::move(name));
    start = comma + 1;
  }
  spec.iface_stats = std::move(names);
}

// The test's extent and how its bytes move. -t makes a test timed, -n counted: whichever is typed
// wins over a profile's spec.
void fill_test(const cxxopts::ParseResult& args, spec::TestSpec& spec, GivenOptions& given) {
  fill_connections(args, spec, given);
  if (auto time = typed(args, "time")) {
    given.time = true;
    spec.duration_s = util::parse_seconds(*time, "-t/--time");
    if (spec.duration_s <= 0) throw UsageError("-t must be more than 0 seconds");
    // A profile's count gives way; one typed beside -t is refused as such (validate.cpp).
    if (!args.count("bytes")) spec.total_bytes = 0;
    if (!args.count("num")) spec.rr.messages = 0;
  }
  if (auto bytes = typed(args, "bytes")) {
    given.bytes = true;
    spec.total_bytes = util::parse_size(*bytes, "-n/--bytes");
  }
  if (auto interval = typed(args, "interval")) {
    given.interval = true;
    spec.interval_s = util::parse_seconds(*interval, "-i/--interval");
  }
  if (auto omit = typed(args, "omit")) {
    given.omit = true;
    spec.omit_s = util::parse_seconds(*omit, "-O/--omit");
  }
  if (auto threads = typed(args, "threads")) {
    given.threads = true;
    spec.threads = parse_u32(*threads, "-T/--threads");
  }
  if (auto buffer = typed(args, "buffer")) {
    given.buffer = true;
    spec.buffer = util::parse_size(*buffer, "-l/--buffer");
  }
  if (auto window = typed(args, "window")) {
    given.window = true;
    spec.window = util::parse_size(*window, "-w/--window");
  }
}

void fill_modes(const cxxopts::ParseResult& args, spec::TestSpec& spec, GivenOptions& given) {
  if (auto mode = typed(args, "recv-mode")) {
    given.recv_mode = true;
    spec.recv_mode = parse_name<spec::RecvMode>(*mode, spec::recv_mode_from_string,
                                                "--recv-mode '" + *mode + "' is not one of recv, recv_into, trunc, "
                                                "splice, mmap");
  }
  if (auto mode = typed(args, "send-mode")) {
    given.send_mode = true;
    spec.send_mode = parse_name<spec::SendMode>(*mode, spec::send_mode_from_string,
                                                "--send-mode '" + *mode + "' is not one of send, zerocopy, sendfile");
  }
  if (auto engine = typed(args, "engine")) {
    given.engine = true;
    spec.engine = parse_name<spec::Engine>(*engine, spec::engine_from_string,
                                           "--engine '" + *engine + "' is not one of asio, threads, uring");
  }
  given.reverse = args.count("reverse") > 0;
  given.bidir = args.count("bidir") > 0;
  if (given.reverse) spec.direction = spec::Direction::reverse;
  if (given.bidir) spec.direction = spec::Direction::bidir;
}

void fill_cport(const std::string& text, config::Config& config) {
  auto port = [&](const std::string& digits) {
    std::uint64_t value = util::parse_count(digits, "--cport");
    if (value < 1 || value > 65535) throw UsageError("--cport ports must be between 1 and 65535, got " + digits);
    return static_cast<std::uint16_t>(value);
  };
  std::size_t dash = text.find('-');
  config.cport_first = port(text.substr(0, dash));
  config.cport_last = dash == std::string::npos ? config.cport_first : port(text.substr(dash + 1));
  if (config.cport_last < config.cport_first) throw UsageError("--cport " + text + ": the range runs backwards");
}

void fill_tuning(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  if (auto name = typed(args, "congestion")) spec.congestion = *name;
  if (auto mss = typed(args, "set-mss")) {
    std::uint64_t value = util::parse_count(*mss, "-M/--set-mss");
    // Linux takes 88 (TCP_MIN_MSS) up to 32767 (MAX_TCP_WINDOW) for TCP_MAXSEG.
    if (value < 88 || value > 32767) throw UsageError("-M must be between 88 and 32767 bytes");
    config.mss = static_cast<std::uint32_t>(value);
  }
  if (args.count("no-delay")) spec.no_delay = true;
  if (args.count("no-lowat")) spec.marks_follow_rate = false;
  if (auto cpus = typed(args, "affinity")) spec.cpus = util::parse_cpu_list(*cpus, "-A/--affinity");
  if (auto range = typed(args, "cport")) fill_cport(*range, config);
  auto rate = typed(args, "bitrate"), total_rate = typed(args, "total-rate"), fq_rate = typed(args, "fq-rate");
  given.rate = rate.has_value();
  given.total_rate = total_rate.has_value();
  if (rate) spec.rate_bps = util::parse_rate(*rate, "-b/--bitrate");
  if (total_rate) spec.rate_bps = util::parse_rate(*total_rate, "--total-rate") / spec.connections;
  if (fq_rate) spec.fq_rate_bps = util::parse_rate(*fq_rate, "--fq-rate");
  given.client_tuning = args.count("set-mss") || args.count("cport") || rate || total_rate || fq_rate ||
                        args.count("no-lowat");
}

}  // namespace

void fill_config(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given,
                 bool profile_names_buffer) {
  spec::TestSpec& spec = config.spec;
  fill_address(args, config, given);
  if (auto bind = typed(args, "bind")) fill_bind(*bind, config);
  fill_output(args, config, given);
  fill_limits(args, config, given);
  fill_raw(args, config, given);
  fill_rr(args, spec, given);
  fill_transfers(args, config, given);
  fill_iface_stats(args, spec, given);  // first: it explains a misplaced interface name
  fill_test(args, spec, given);
  fill_modes(args, spec, given);
  fill_tuning(args, config, given);
  config.iperf3 = given.iperf3 = args.count("iperf3") > 0;
  // A counted test has no window. (-F's is counted too, once the client has opened the file.)
  if (given.bytes || given.num || given.transfers) spec.duration_s = 0;
  const bool default_buffer = !given.buffer && !profile_names_buffer;
  // iperf3's own default block: its servers of 3.12 refuse more than 1 MiB.
  if (config.iperf3 && default_buffer) spec.buffer = 128 * 1024;
  // A sink reads whatever arrives: a smaller default buffer per connection, as many may be open.
  if (config.raw && config.role == config::Role::server && default_buffer) spec.buffer = 256 * 1024;
}

}  // namespace testio::cli
