#include "cli/options.hpp"

#include <cxxopts.hpp>
#include <algorithm>
#include <set>
#include <vector>

#include "cli/profile.hpp"
#include "cli/validate.hpp"
#include "net/nic_counters.hpp"
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
    ("B,bind", "Server: listen address. Client: source address. %DEV also binds to that interface "
               "(SO_BINDTODEVICE)", cxxopts::value<std::string>(), "ADDRESS[%DEV]")
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
    ("F,file", "Client: send this file (with --raw to any receiver; to a testio server both sides compare "
               "digests). Server: the content --transfers download",
       cxxopts::value<std::string>(), "FILE");
  options.add_options("Transfers")
    ("transfers", "Download COUNT transfers of --size bytes from the server, N at a time, each on a fresh "
                  "connection; reports transfers/s, connect and transfer time percentiles",
       cxxopts::value<std::string>(), "COUNT")
    ("size", "Bytes per transfer", cxxopts::value<std::string>(), "SIZE")
    ("reuse", "Keep each of the N connections for its next transfer")
    ("save", "Write each transfer to DIR/transfer-NNNN; an existing file is refused unless --force",
       cxxopts::value<std::string>(), "DIR")
    ("force", "With --save: overwrite existing files");
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
                  "trunc (MSG_TRUNC, discarded in the kernel), splice (socket -> pipe -> /dev/null), "
                  "mmap (TCP_ZEROCOPY_RECEIVE)",
       cxxopts::value<std::string>()->default_value("recv_into"), "MODE")
    ("send-mode", "How the sender writes: send (copy from a reused buffer), zerocopy (MSG_ZEROCOPY), "
                  "sendfile (from -F or a memfd)",
       cxxopts::value<std::string>()->default_value("send"), "MODE")
    ("engine", "What drives the data connections on both sides: asio (an event loop per worker), threads "
               "(a blocking thread per connection), uring (an io_uring per worker)",
       cxxopts::value<std::string>()->default_value("asio"), "ENGINE")
    ("iface-stats", "Each interval, rx/tx rate and packets per NIC on both sides, from the kernel's counters; "
       "default: the interface of the route to the peer (a bond: its members). Name them as --iface-stats=eth0,eth1",
       cxxopts::value<std::string>()->implicit_value(""), "IFACE,...")
    ("iperf3", "The server is a stock iperf3 -s: speak its protocol (TCP)")
    ("R,reverse", "The server sends, the client receives")
    ("bidir", "Both send at once, N connections each way");
  options.add_options("Tuning")
    ("C,congestion", "TCP congestion control on both sides, e.g. cubic, bbr, reno", cxxopts::value<std::string>(),
       "ALGO")
    ("M,set-mss", "TCP maximum segment size, set before connecting so the SYN announces it",
       cxxopts::value<std::string>(), "BYTES")
    ("N,no-delay", "TCP_NODELAY on both sides (no Nagle)")
    ("A,affinity", "Pin worker threads to these CPUs (round robin); the server follows unless it pins itself",
       cxxopts::value<std::string>(), "CPULIST")
    ("cport", "Data connection i uses source port PORT+i (from a range PORT-LAST), so flows hash predictably",
       cxxopts::value<std::string>(), "PORT[-LAST]")
    ("b,bitrate", "Pace each connection to RATE bits/s in the application, e.g. 500M, 2G",
       cxxopts::value<std::string>(), "RATE")
    ("total-rate", "Pace the test to RATE bits/s in total, split evenly over the connections",
       cxxopts::value<std::string>(), "RATE")
    ("fq-rate", "Kernel pacing per connection (SO_MAX_PACING_RATE), RATE bits/s", cxxopts::value<std::string>(),
       "RATE")
    ("no-lowat", "Leave SO_RCVLOWAT and TCP_NOTSENT_LOWAT at the kernel's defaults on both sides (testio sets them "
                 "from each stream's measured rate)");
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
      "max-connections", "max-buffer", "max-duration", "max-frame", "raw", "hash", "file", "rr", "msize", "num", "depth",
      "transfers", "size", "reuse", "save", "force",
      "send-mode", "engine", "congestion", "set-mss", "no-delay", "affinity", "cport", "bitrate", "total-rate", "fq-rate",
      "no-lowat", "iface-stats", "iperf3", "reverse", "bidir"};
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

void fill_transfers(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  if (args.count("transfers")) {
    given.transfers = true;
    config.transfers = util::parse_count(args["transfers"].as<std::string>(), "--transfers");
  }
  if (args.count("size")) {
    given.size = true;
    config.transfer_size = util::parse_size(args["size"].as<std::string>(), "--size");
  }
  config.reuse = given.reuse = args.count("reuse") > 0;
  if (args.count("save")) {
    given.save = true;
    config.save_dir = args["save"].as<std::string>();
  }
  config.force = given.force = args.count("force") > 0;
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
  if (args.count("congestion")) config.congestion = args["congestion"].as<std::string>();
  if (args.count("set-mss")) {
    std::uint64_t mss = util::parse_count(args["set-mss"].as<std::string>(), "-M/--set-mss");
    // Linux takes 88 (TCP_MIN_MSS) up to 32767 (MAX_TCP_WINDOW) for TCP_MAXSEG.
    if (mss < 88 || mss > 32767) throw UsageError("-M must be between 88 and 32767 bytes");
    config.mss = static_cast<std::uint32_t>(mss);
  }
  config.no_delay = args.count("no-delay") > 0;
  config.rate_lowat = args.count("no-lowat") == 0;
  if (args.count("affinity")) config.cpus = util::parse_cpu_list(args["affinity"].as<std::string>(), "-A/--affinity");
  if (args.count("cport")) fill_cport(args["cport"].as<std::string>(), config);
  given.rate = args.count("bitrate") > 0;
  given.total_rate = args.count("total-rate") > 0;
  if (given.rate) config.rate_bps = util::parse_rate(args["bitrate"].as<std::string>(), "-b/--bitrate");
  if (given.total_rate)
    config.rate_bps = util::parse_rate(args["total-rate"].as<std::string>(), "--total-rate") / config.connections;
  if (args.count("fq-rate")) config.fq_rate_bps = util::parse_rate(args["fq-rate"].as<std::string>(), "--fq-rate");
  given.client_tuning = args.count("set-mss") || args.count("cport") || given.rate || given.total_rate ||
                        args.count("fq-rate") || !config.rate_lowat;
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
    throw UsageError("--recv-mode '" + mode + "' is not one of recv, recv_into, trunc, splice, mmap");
  config.recv_mode = *recv_mode;
  given.send_mode = args["send-mode"].count() > 0;
  std::string send = args["send-mode"].as<std::string>();
  auto send_mode = config::send_mode_from_string(send);
  if (!send_mode) throw UsageError("--send-mode '" + send + "' is not one of send, zerocopy, sendfile");
  config.send_mode = *send_mode;
  given.engine = args["engine"].count() > 0;
  std::string engine = args["engine"].as<std::string>();
  auto chosen = config::engine_from_string(engine);
  if (!chosen) throw UsageError("--engine '" + engine + "' is not one of asio, threads, uring");
  config.engine = *chosen;
}

void fill_iface_stats(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  if (!args.count("iface-stats")) return;
  config.iface_stats = given.iface_stats = true;
  std::string list = args["iface-stats"].as<std::string>();
  // "--iface-stats eth0" leaves eth0 to the positional connection count: say what was meant.
  if (list.empty() && args.count("connections")) {
    const std::string& positional = args["connections"].as<std::vector<std::string>>()[0];
    if (positional.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--iface-stats takes its interfaces after '=': --iface-stats=" + positional);
  }
  for (std::size_t start = 0; start < list.size();) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    if (name.empty() || !net::is_valid_nic_name(name))
      throw UsageError("--iface-stats '" + list + "' must be interface names separated by commas");
    config.iface_names.push_back(std::move(name));
    start = comma + 1;
  }
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
        options.help({"General", "Server", "Client", "Tuning", "Request/response", "Transfers", "Raw TCP",
                      "Limits and security"});
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
  if (args.count("bind")) fill_bind(args["bind"].as<std::string>(), config);
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
  fill_transfers(args, config, given);
  fill_iface_stats(args, config, given);  // first: it explains a misplaced interface name
  fill_test(args, config, given);
  fill_tuning(args, config, given);
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
