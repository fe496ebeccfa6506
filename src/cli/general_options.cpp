// General, server, and limits and security options.
#include "cli/groups.hpp"

#include "net/access_list.hpp"
#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

void fill_address(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  given.server = args.count("server") > 0;
  given.client = args.count("client") > 0 || args.count("urls") > 0;  // --urls names the servers itself
  if (args.count("client")) config.host = args.value("client");
  config.role = given.server ? config::Role::server : config::Role::client;
  config.verbosity = args.count("debug") ? 2 : args.count("verbose") ? 1 : 0;
  std::uint64_t port = util::parse_count(args.value("port"), "the port");
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

void fill_output(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
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

void fill_limits(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  spec::Limits& limits = config.limits;
  limits.max_tests = parse_u32(args.value("max-tests"), "--max-tests");
  limits.max_connections = parse_u32(args.value("max-connections"), "--max-connections");
  limits.max_buffer = util::parse_size(args.value("max-buffer"), "--max-buffer");
  limits.max_duration_s = util::parse_seconds(args.value("max-duration"), "--max-duration");
  std::uint64_t frame = util::parse_size(args.value("max-frame"), "--max-frame");
  if (frame < 4096 || frame > (16u << 20)) throw UsageError("--max-frame must be between 4K and 16M");
  limits.max_frame = static_cast<std::uint32_t>(frame);
  limits.handshake_timeout_s = util::parse_seconds(args.value("handshake-timeout"), "--handshake-timeout");
  limits.max_pending_per_peer = parse_u32(args.value("max-pending-per-peer"), "--max-pending-per-peer");
  limits.queue = parse_u32(args.value("queue"), "--queue");
  if (auto cap = typed(args, "max-tests-per-peer")) {
    limits.max_tests_per_peer = parse_u32(*cap, "--max-tests-per-peer");
    if (!limits.max_tests_per_peer) throw UsageError("--max-tests-per-peer must be between 1 and --max-tests");
  }
  if (auto cap = typed(args, "max-server-connections")) {
    limits.max_server_connections = parse_u32(*cap, "--max-server-connections");
    if (!limits.max_server_connections) throw UsageError("--max-server-connections must be between 1 and 1048576");
  }
  config.stall_timeout_s = util::parse_seconds(args.value("stall-timeout"), "--stall-timeout");
  config.max_wait_s = util::parse_seconds(args.value("max-wait"), "--max-wait");
  given.max_wait = args.count("max-wait") > 0;
  given.server_limits = args.count("max-tests") || args.count("handshake-timeout") || args.count("max-frame") ||
                        args.count("allow") || args.count("max-pending-per-peer") || args.count("queue") ||
                        args.count("max-tests-per-peer") || args.count("max-server-connections");
  if (auto allow = typed(args, "allow")) config.allow = *allow;
  if (auto key = typed(args, "psk-file")) config.psk_file = *key;
  given.psk_file = !config.psk_file.empty();
}

void check_roles(const config::Config& config, const GivenOptions& given) {
  if (given.server && given.client)
    throw UsageError("-s and -c exclude each other: run a server or a client, not both");
  if (given.mesh) return;  // mesh_options.cpp has its own
  if (!given.server && !given.client) throw UsageError("say -s to serve tests or -c HOST to run one (see testio --help)");
  if (config.role == config::Role::client && config.host.empty() && config.urls.empty())
    throw UsageError("-c needs the server's host name or address");
  if (given.ipv4 && given.ipv6) throw UsageError("-4 and -6 exclude each other");
  if (config.role == config::Role::client && given.one_off) throw UsageError("-1 is a server option");
  if (config.role == config::Role::client && given.server_limits)
    throw UsageError("--max-tests, --max-tests-per-peer, --max-server-connections, --queue, --allow, "
                     "--handshake-timeout, --max-frame and --max-pending-per-peer are server options");
}

void check_server_options(const config::Config& config, const GivenOptions& given) {
  if (config.role != config::Role::server) return;
  struct Named { bool given; const char* name; };
  // A raw sink has no client to tell it its buffer size, threads or interval.
  for (Named option : {Named{given.connections, "a connection count"}, Named{given.time, "-t"}, Named{given.bytes, "-n"},
                       Named{given.threads && !given.raw, "-T"}, Named{given.buffer && !given.raw, "-l"},
                       Named{given.window, "-w"}, Named{given.transfers, "--transfers"}, Named{given.size, "--size"},
                       Named{given.reuse, "--reuse"}, Named{given.save, "--save"}, Named{given.force, "--force"},
                       Named{given.recv_mode, "--recv-mode"}, Named{given.send_mode, "--send-mode"},
                       Named{given.engine, "--engine"}, Named{given.interval && !given.raw, "-i"}, Named{given.omit, "-O"}})
    if (option.given)
      throw UsageError(std::string(option.name) + " is a client option: the client tells the server what to run");
  if (given.rr) throw UsageError("--rr is a client option: the server echoes on request");
  if (given.reverse || given.bidir)
    throw UsageError("-R and --bidir are client options: the client tells the server which way to send");
  if (given.client_tuning)
    throw UsageError("-M, --cport, --spread, --rx-affinity, -b, --total-rate, --fq-rate and --no-lowat are client "
                     "options: the client's data connections carry them");
  if (!config.spec.congestion.empty() || config.spec.no_delay)
    throw UsageError("-C and -N are client options: the client asks for them on both sides");
  if (given.iface_stats)
    throw UsageError("--iface-stats is a client option: the server samples its side when the client asks");
  if (given.iperf3) throw UsageError("--iperf3 is a client option: testio -s answers iperf3 clients on its port by itself");
  if (given.max_wait) throw UsageError("--max-wait is a client option: how long it waits in a busy server's queue");
  if (given.file && given.raw) throw UsageError("-F on a server is what --transfers download; a raw sink only receives");
  if (given.hash && !given.raw)
    throw UsageError("--hash on a server applies to --raw sinks; a client's -F test names its own digest");
}

void check_limits(const config::Config& config) {
  const spec::Limits& limits = config.limits;
  if (limits.max_tests < 1 || limits.max_tests > 1024) throw UsageError("--max-tests must be between 1 and 1024");
  if (limits.max_connections < 1 || limits.max_connections > 65535)
    throw UsageError("--max-connections must be between 1 and 65535");
  if (limits.max_buffer < 1 || limits.max_buffer > (1ull << 30)) throw UsageError("--max-buffer must be between 1 and 1G");
  if (limits.max_duration_s < 1) throw UsageError("--max-duration must be at least 1 second");
  if (limits.handshake_timeout_s < 0.1 || limits.handshake_timeout_s > 600)
    throw UsageError("--handshake-timeout must be between 0.1 and 600 seconds");
  if (limits.max_pending_per_peer < 1 || limits.max_pending_per_peer > 65535)
    throw UsageError("--max-pending-per-peer must be between 1 and 65535");
  if (limits.queue > 4096) throw UsageError("--queue must be between 0 and 4096");
  if (limits.max_tests_per_peer > limits.max_tests)
    throw UsageError("--max-tests-per-peer must be between 1 and --max-tests (" + std::to_string(limits.max_tests) + ")");
  if (limits.max_server_connections > 1u << 20)
    throw UsageError("--max-server-connections must be between 1 and 1048576");
  if (config.stall_timeout_s != 0 && (config.stall_timeout_s < 2 || config.stall_timeout_s > 86400))
    throw UsageError("--stall-timeout must be 0 (never) or between 2 and 86400 seconds");
  if (config.max_wait_s > 86400) throw UsageError("--max-wait must be between 0 and 86400 seconds");
  if (!config.allow.empty()) {
    try {
      net::AccessList::parse(config.allow);
    } catch (const std::invalid_argument& error) {
      throw UsageError(error.what());
    }
  }
}

}  // namespace

void add_general_options(OptionTable& options) {
  // clang-format off
  options.add_options("General")
    ("h,help", "Print this help and exit")
    ("version", "Print the version and exit")
    ("v,verbose", "More detail: per-connection lines, and progress on stderr")
    ("d,debug", "Debug diagnostics on stderr")
    ("p,port", "Port for control and data connections", value().default_value("5201"), "PORT")
    ("B,bind", "Server: listen address. Client: source address. %DEV also binds to that interface "
               "(SO_BINDTODEVICE)", value(), "ADDRESS[%DEV]")
    ("4,version4,ipv4", "Use IPv4 only")
    ("6,version6,ipv6", "Use IPv6 only")
    ("J,json", "Report as one JSON document shaped like iperf3's -J")
    ("json-stream", "Report as JSON lines, one per event (start, interval, end, error), as they happen")
    ("f,format", "Rate unit: k, m, g (Kbit/s, Mbit/s, Gbit/s) or K, M, G (KByte/s ...); default automatic",
       value(), "UNIT")
    ("logfile", "Write the report and diagnostics to FILE (appended) instead of stdout/stderr",
       value(), "FILE")
    ("config", "Read options from a JSON profile (keys are long option names, and \"spec\" a test spec, as a "
               "report's start.testio.spec); the command line overrides it",
       value(), "FILE");
  // clang-format on
  // clang-format off
  options.add_options("Server")
    ("s,server", "Run as a server: serve tests until killed (one at a time unless --max-tests)")
    ("1,one-off", "Server: exit after one test")
    ("max-tests", "Server: tests that may run at once; more wait in the queue", value().default_value("1"), "K")
    ("max-tests-per-peer", "Server: tests one address may have running or waiting at once (default: no cap "
       "beyond --max-tests)", value(), "K")
    ("max-server-connections", "Server: data connections of all its tests at once; a test that would pass it "
       "waits, one bigger than it is refused (default: no cap)", value(), "N")
    ("queue", "Server: tests that may wait for a slot; more get a busy answer at once", value().default_value("16"), "N")
    ("allow", "Server: talk only to peers in these networks, e.g. 198.18.0.0/15,::1", value(), "CIDR,...")
    ("handshake-timeout", "Server: seconds a new connection may take to say who it is",
       value().default_value("5"), "SECONDS")
    ("max-pending-per-peer", "Server: connections one address may hold in their handshake (beyond those its "
       "running test opens); more are refused at once", value().default_value("32"), "N")
    ("stall-timeout", "Both: a peer that says nothing for this long (it says it is alive every second) has "
       "stopped: the test ends on both sides (--mesh: a rank silent this long is lost); 0 never", value().default_value("10"), "SECONDS")
    ("max-wait", "Client: how long to wait in a busy server's queue before giving up", value().default_value("60"),
       "SECONDS");
  // clang-format on
  // clang-format off
  options.add_options("Limits and security")
    ("psk-file", "Pre-shared key file: the server demands it, the client proves it (HMAC-SHA256)",
       value(), "FILE")
    ("max-connections", "Cap on connections per test", value().default_value("4096"), "N")
    ("max-buffer", "Cap on -l", value().default_value("256M"), "SIZE")
    ("max-duration", "Cap on -t, -O and -i in seconds", value().default_value("86400"), "SECONDS")
    ("max-frame", "Server: cap on a control message's size", value().default_value("64K"), "SIZE");
  // clang-format on
}

void fill_general(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  fill_address(args, config, given);
  if (auto bind = typed(args, "bind")) fill_bind(*bind, config);
  fill_output(args, config, given);
  fill_limits(args, config, given);
}

void check_general(const config::Config& config, const GivenOptions& given) {
  check_roles(config, given);
  check_server_options(config, given);
  check_limits(config);
  if (given.json && given.json_stream) throw UsageError("--json and --json-stream exclude each other");
}

}  // namespace testio::cli
