#include "cli/options.hpp"

#include <cxxopts.hpp>
#include <set>
#include <vector>

#include "cli/profile.hpp"
#include "cli/validate.hpp"
#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

cxxopts::Options make_options() {
  cxxopts::Options options("testio",
                           "testio: multi-connection TCP throughput tester.\n"
                           "  testio -s                 serve tests\n"
                           "  testio -c HOST [N]        run a test with N connections");
  options.positional_help("[N]").show_positional_help();
  // clang-format off
  options.add_options("General")
    ("h,help", "Print this help and exit")
    ("version", "Print the version and exit")
    ("v,verbose", "More detail: per-connection lines, and progress on stderr")
    ("debug", "Debug diagnostics on stderr")
    ("p,port", "Port for control and data connections", cxxopts::value<std::string>()->default_value("5201"), "PORT")
    ("B,bind", "Server: listen address. Client: source address", cxxopts::value<std::string>(), "ADDRESS")
    ("4,ipv4", "Use IPv4 only")
    ("6,ipv6", "Use IPv6 only")
    ("J,json", "Report as one JSON document shaped like iperf3's -J")
    ("json-stream", "Report as JSON lines, one per event (start, interval, end, error), as they happen")
    ("f,format", "Rate unit: k, m, g (Kbit/s, Mbit/s, Gbit/s) or K, M, G (KByte/s ...); default automatic",
       cxxopts::value<std::string>(), "UNIT")
    ("logfile", "Write the report and diagnostics to FILE (appended) instead of stdout/stderr",
       cxxopts::value<std::string>(), "FILE")
    ("config", "Read options from a JSON profile (keys are long option names); the command line overrides it",
       cxxopts::value<std::string>(), "FILE");
  options.add_options("Server")
    ("s,server", "Run as a server: serve tests until killed (one at a time unless --max-tests)")
    ("1,one-off", "Server: exit after one test")
    ("max-tests", "Server: tests that may run at once; more get a busy answer", cxxopts::value<std::string>()->default_value("1"), "K")
    ("allow", "Server: talk only to peers in these networks, e.g. 198.18.0.0/15,::1", cxxopts::value<std::string>(), "CIDR,...")
    ("handshake-timeout", "Server: seconds a new connection may take to say who it is",
       cxxopts::value<std::string>()->default_value("5"), "SECONDS");
  options.add_options("Request/response")
    ("rr", "Request/response: each connection sends --msize bytes, waits for the echo, repeats; "
           "reports messages/s and latency percentiles")
    ("msize", "Bytes per request (and per echo)", cxxopts::value<std::string>()->default_value("1K"), "SIZE")
    ("num", "Requests per connection (instead of -t)", cxxopts::value<std::string>(), "COUNT")
    ("depth", "Requests outstanding per connection", cxxopts::value<std::string>()->default_value("1"), "K");
  options.add_options("Raw TCP")
    ("raw", "Plain TCP, no testio protocol: with -s a sink any nc/socat can send to; with -c send to any receiver")
    ("hash", "Digest of the bytes with --raw: sha1, sha256 or none", cxxopts::value<std::string>()->default_value("sha1"),
       "NAME")
    ("F,file", "With -c --raw: send this file", cxxopts::value<std::string>(), "FILE");
  options.add_options("Limits and security")
    ("psk-file", "Pre-shared key file: the server demands it, the client proves it (HMAC-SHA256)",
       cxxopts::value<std::string>(), "FILE")
    ("max-connections", "Cap on connections per test", cxxopts::value<std::string>()->default_value("1024"), "N")
    ("max-buffer", "Cap on -l", cxxopts::value<std::string>()->default_value("256M"), "SIZE")
    ("max-duration", "Cap on -t, -O and -i in seconds", cxxopts::value<std::string>()->default_value("86400"), "SECONDS")
    ("max-frame", "Server: cap on a control message's size", cxxopts::value<std::string>()->default_value("64K"), "SIZE");
  options.add_options("Client")
    ("c,client", "Run as a client against the testio server at HOST", cxxopts::value<std::string>(), "HOST")
    ("P,parallel", "Number of connections (same as the positional N)", cxxopts::value<std::string>(), "N")
    ("t,time", "Seconds to send for", cxxopts::value<std::string>()->default_value("10"), "SECONDS")
    ("n,bytes", "Send this many bytes in total, split over the connections, instead of a time",
       cxxopts::value<std::string>(), "BYTES")
    ("i,interval", "Seconds between interval reports; 0 for none", cxxopts::value<std::string>()->default_value("1"),
       "SECONDS")
    ("O,omit", "Seconds of warm-up to send first and leave out of the summary (shown, marked omitted)",
       cxxopts::value<std::string>()->default_value("0"), "SECONDS")
    ("T,threads", "Worker threads on each side (default: min(N, cores))", cxxopts::value<std::string>(), "THREADS")
    ("l,buffer", "Bytes per read/write call, e.g. 128K, 2M, 2MiB", cxxopts::value<std::string>()->default_value("2M"), "SIZE")
    ("w,window", "Socket buffer size (SO_SNDBUF/SO_RCVBUF) on both sides (default: kernel autotuning)",
       cxxopts::value<std::string>(), "SIZE")
    ("recv-mode", "How the receiver reads: recv (new buffer per call), recv_into (reused buffer), "
                  "trunc (MSG_TRUNC, discarded in the kernel)",
       cxxopts::value<std::string>()->default_value("recv_into"), "MODE")
    ("iperf3", "The server is a stock iperf3 -s: speak its protocol (TCP)")
    ("R,reverse", "With --iperf3: the server sends, testio receives")
    ("bidir", "With --iperf3: both send at once");
  // Left out of --help's groups: it is the positional N shown in the usage line.
  options.add_options("Positional")
    ("connections", "Number of connections", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  options.parse_positional({"connections"});
  return options;
}

// Long option names a profile may set: everything but the ones that only make sense typed.
bool profile_may_set(const std::string& key) {
  static const std::set<std::string> keys = {
      "verbose", "debug", "port", "bind", "ipv4", "ipv6", "json", "json-stream", "format", "logfile",
      "server", "one-off", "client", "parallel", "time", "bytes", "interval", "omit", "threads",
      "buffer", "window", "recv-mode", "max-tests", "allow", "handshake-timeout", "psk-file",
      "max-connections", "max-buffer", "max-duration", "max-frame", "raw", "hash", "file", "rr", "msize", "num", "depth", "iperf3", "reverse", "bidir"};
  return keys.count(key) > 0;
}

cxxopts::ParseResult parse_tokens(cxxopts::Options& options, const std::vector<std::string>& tokens) {
  std::vector<const char*> argv;
  for (const std::string& token : tokens) argv.push_back(token.c_str());
  try {
    return options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& error) {
    throw UsageError(std::string(error.what()) + " (see testio --help)");
  }
}

std::uint32_t parse_u32(const std::string& text, const char* what) {
  std::uint64_t value = util::parse_count(text, what);
  if (value > 0xffffffffull) throw UsageError(std::string(what) + " '" + text + "' is too large");
  return static_cast<std::uint32_t>(value);
}

void fill_connections(const cxxopts::ParseResult& args, config::Config& config,
                      GivenOptions& given) {
  std::optional<std::uint32_t> positional;
  if (args.count("connections")) {
    const auto& values = args["connections"].as<std::vector<std::string>>();
    if (values.size() > 1)
      throw UsageError("unexpected argument '" + values[1] + "': give one connection count");
    positional = parse_u32(values[0], "the connection count");
  }
  std::optional<std::uint32_t> parallel;
  if (args.count("parallel")) parallel = parse_u32(args["parallel"].as<std::string>(), "-P/--parallel");
  if (positional && parallel && *positional != *parallel)
    throw UsageError("the connection count is given twice (" + std::to_string(*positional) +
                     " and -P " + std::to_string(*parallel) + "); give one");
  if (positional || parallel) {
    config.connections = positional ? *positional : *parallel;
    given.connections = true;
  }
}

void fill_output(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  given.json = args.count("json") > 0;
  given.json_stream = args.count("json-stream") > 0;
  config.output = given.json_stream ? config::OutputFormat::json_stream
                  : given.json      ? config::OutputFormat::json
                                    : config::OutputFormat::text;
  if (args.count("format")) {
    std::string unit = args["format"].as<std::string>();
    if (unit.size() != 1 || !util::is_rate_unit(unit[0]))
      throw UsageError("-f/--format '" + unit + "' is not one of k, m, g, K, M, G");
    config.unit = unit[0];
  }
  if (args.count("logfile")) config.logfile = args["logfile"].as<std::string>();
}

void fill_limits(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  config::Limits& limits = config.limits;
  limits.max_tests = parse_u32(args["max-tests"].as<std::string>(), "--max-tests");
  limits.max_connections = parse_u32(args["max-connections"].as<std::string>(), "--max-connections");
  limits.max_buffer = util::parse_size(args["max-buffer"].as<std::string>(), "--max-buffer");
  limits.max_duration_s = util::parse_seconds(args["max-duration"].as<std::string>(), "--max-duration");
  std::uint64_t frame = util::parse_size(args["max-frame"].as<std::string>(), "--max-frame");
  if (frame < 4096 || frame > (16u << 20)) throw UsageError("--max-frame must be between 4K and 16M");
  limits.max_frame = static_cast<std::uint32_t>(frame);
  limits.handshake_timeout_s = util::parse_seconds(args["handshake-timeout"].as<std::string>(), "--handshake-timeout");
  given.server_limits = args["max-tests"].count() || args["handshake-timeout"].count() ||
                        args["max-frame"].count() || args.count("allow");
  if (args.count("allow")) config.allow = args["allow"].as<std::string>();
  if (args.count("psk-file")) config.psk_file = args["psk-file"].as<std::string>();
}

void fill_raw(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  config.raw = given.raw = args.count("raw") > 0;
  given.hash = args["hash"].count() > 0;
  std::string hash = args["hash"].as<std::string>();
  auto kind = util::hash_from_string(hash);
  if (!kind) throw UsageError("--hash '" + hash + "' is not one of sha1, sha256, none");
  config.hash = *kind;
  if (args.count("file")) {
    given.file = true;
    config.file = args["file"].as<std::string>();
  }
}

void fill_rr(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  config.rr = given.rr = args.count("rr") > 0;
  given.rr_options = args["msize"].count() || args.count("num") || args["depth"].count();
  config.msize = util::parse_size(args["msize"].as<std::string>(), "--msize");
  if (args.count("num")) {
    given.num = true;
    config.messages = util::parse_count(args["num"].as<std::string>(), "--num");
  }
  config.depth = parse_u32(args["depth"].as<std::string>(), "--depth");
}

void fill_test(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  fill_connections(args, config, given);
  given.time = args["time"].count() > 0;
  config.duration_s = util::parse_seconds(args["time"].as<std::string>(), "-t/--time");
  if (args.count("bytes")) {
    given.bytes = true;
    config.total_bytes = util::parse_size(args["bytes"].as<std::string>(), "-n/--bytes");
  }
  given.interval = args["interval"].count() > 0;
  config.interval_s = util::parse_seconds(args["interval"].as<std::string>(), "-i/--interval");
  given.omit = args["omit"].count() > 0;
  config.omit_s = util::parse_seconds(args["omit"].as<std::string>(), "-O/--omit");
  if (args.count("threads")) {
    given.threads = true;
    config.threads = parse_u32(args["threads"].as<std::string>(), "-T/--threads");
  }
  given.buffer = args["buffer"].count() > 0;
  config.buffer = util::parse_size(args["buffer"].as<std::string>(), "-l/--buffer");
  if (args.count("window")) {
    given.window = true;
    config.window = util::parse_size(args["window"].as<std::string>(), "-w/--window");
  }
  given.recv_mode = args["recv-mode"].count() > 0;
  std::string mode = args["recv-mode"].as<std::string>();
  auto recv_mode = config::recv_mode_from_string(mode);
  if (!recv_mode)
    throw UsageError("--recv-mode '" + mode + "' is not one of recv, recv_into, trunc");
  config.recv_mode = *recv_mode;
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  cxxopts::Options options = make_options();
  std::vector<std::string> tokens(argv, argv + argc);
  cxxopts::ParseResult args = parse_tokens(options, tokens);
  if (args.count("config")) {
    // The profile's entries go first and are dropped where the command line set the same thing.
    std::vector<std::string> from_profile = profile_tokens(
        args["config"].as<std::string>(), profile_may_set, [&](const std::string& key) {
          // Options that exclude each other count as set when the command line set the other one.
          return args.count(key) > 0 || (key == "parallel" && args.count("connections") > 0) ||
                 (key == "time" && args.count("bytes") > 0) || (key == "bytes" && args.count("time") > 0) ||
                 (key == "json" && args.count("json-stream") > 0) ||
                 (key == "json-stream" && args.count("json") > 0) ||
                 (key == "server" && args.count("client") > 0) || (key == "client" && args.count("server") > 0);
        });
    tokens.insert(tokens.begin() + 1, from_profile.begin(), from_profile.end());
    args = parse_tokens(options, tokens);
  }
  if (args.count("help")) {
    parsed.action = ParsedCommandLine::Action::help;
    parsed.help_text =
        options.help({"General", "Server", "Client", "Request/response", "Raw TCP", "Limits and security"});
    return parsed;
  }
  if (args.count("version")) {
    parsed.action = ParsedCommandLine::Action::version;
    return parsed;
  }

  config::Config& config = parsed.config;
  GivenOptions given;
  given.server = args.count("server") > 0;
  given.client = args.count("client") > 0;
  if (given.client) config.host = args["client"].as<std::string>();
  config.role = given.server ? config::Role::server : config::Role::client;

  config.verbosity = args.count("debug") ? 2 : args.count("verbose") ? 1 : 0;
  std::uint64_t port = util::parse_count(args["port"].as<std::string>(), "the port");
  if (port > 65535) throw UsageError("the port must be between 0 and 65535, got " + std::to_string(port));
  config.port = static_cast<std::uint16_t>(port);
  if (args.count("bind")) config.bind_address = args["bind"].as<std::string>();
  given.ipv4 = args.count("ipv4") > 0;
  given.ipv6 = args.count("ipv6") > 0;
  config.family = given.ipv4 ? config::AddressFamily::v4
                  : given.ipv6 ? config::AddressFamily::v6
                               : config::AddressFamily::any;
  config.one_off = given.one_off = args.count("one-off") > 0;
  fill_output(args, config, given);
  fill_limits(args, config, given);
  fill_raw(args, config, given);
  fill_rr(args, config, given);
  fill_test(args, config, given);
  config.iperf3 = given.iperf3 = args.count("iperf3") > 0;
  config.reverse = given.reverse = args.count("reverse") > 0;
  config.bidir = given.bidir = args.count("bidir") > 0;
  given.psk_file = !config.psk_file.empty();
  // iperf3's own default block: its servers of 3.12 refuse more than 1 MiB.
  if (config.iperf3 && !given.buffer) config.buffer = 128 * 1024;
  // A sink reads whatever arrives: a smaller default buffer per connection, as many may be open.
  if (config.raw && config.role == config::Role::server && !given.buffer) config.buffer = 256 * 1024;

  validate(config, given);
  return parsed;
}

}  // namespace testio::cli
