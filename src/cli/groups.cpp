// testio's own groups of options, in --help's order: general, server and limits; the test; tuning;
// --raw; metrics; --mesh. Each group is its definitions, how they fill a Config, and its own
// rules (cli/groups.hpp); the workloads' own groups are in their folders.

// General, server, and limits and security options.
#include "cli/groups.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "mesh/schedule.hpp"
#include "mesh/world.hpp"
#include "metrics/listen_address.hpp"
#include "net/access_list.hpp"
#include "net/nic_counters.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload.hpp"

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
    ("dry-run", "Check the options as for a run, say whether they are valid, and exit without connecting "
                "(exit 2 and the reason when they are not)")
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

// The options that say what test a client runs.
namespace {

void fill_connections(const ParsedOptions& args, spec::TestSpec& spec, GivenOptions& given) {
  std::optional<std::uint32_t> positional;
  if (args.count("connections")) {
    const std::vector<std::string> values = args.values("connections");
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

void fill_iface_stats(const ParsedOptions& args, spec::TestSpec& spec, GivenOptions& given) {
  if (!args.count("iface-stats")) return;
  given.iface_stats = true;
  std::string list = args.value("iface-stats");
  // "--iface-stats eth0" leaves eth0 to the positional connection count: say what was meant.
  if (list.empty() && args.count("connections")) {
    const std::string positional = args.values("connections")[0];
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
void fill_extent(const ParsedOptions& args, spec::TestSpec& spec, GivenOptions& given) {
  fill_connections(args, spec, given);
  if (auto time = typed(args, "time")) {
    given.time = true;
    spec.duration_s = util::parse_seconds(*time, "-t/--time");
    // A profile's count gives way (a workload's own, in its group); one typed beside -t is
    // refused as such (validate(), in options.cpp).
    if (!args.count("bytes")) spec.total_bytes = 0;
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
    if (threads->find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("-T is testio's --threads and takes a number; iperf3's -T (a title) is --title here");
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

void fill_modes(const ParsedOptions& args, spec::TestSpec& spec, GivenOptions& given) {
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

void check_extent(const config::Config& config, const GivenOptions& given) {
  if (given.time && given.bytes) throw UsageError("-t and -n exclude each other: give a time or a byte count");
  // (A count typed beside -t zeroed its window: its own rule says they exclude each other.)
  if (given.time && !given.num && !given.transfers && config.spec.duration_s <= 0)
    throw UsageError("-t must be more than 0 seconds");
  if (given.bytes && config.spec.total_bytes == 0) throw UsageError("-n must be more than 0 bytes");
  if (given.threads && config.spec.threads == 0) throw UsageError("-T must be at least 1");
  if (given.json && given.json_stream) throw UsageError("--json and --json-stream exclude each other");
}

void check_iface_stats(const config::Config& config, const GivenOptions& given) {
  if (!given.iface_stats || !config.spec.iface_stats) return;
  for (const std::string& name : *config.spec.iface_stats)
    if (!net::nic_exists(name))
      throw UsageError("--iface-stats: there is no network interface '" + name + "' here (see ip link)");
}

// iperf3's protocol carries a bulk TCP test and nothing of testio's own.
void check_iperf3(const config::Config& config, const GivenOptions& given) {
  if (!given.iperf3) return;
  if (given.raw || given.rr) throw UsageError("--iperf3 runs iperf3's bulk TCP test: drop --raw and --rr");
  if (given.psk_file) throw UsageError("--psk-file is testio's own key; iperf3's RSA authentication is not supported");
  if (config.spec.connections > 128) throw UsageError("iperf3 allows at most 128 streams (-P)");
  if (config.spec.buffer > (1u << 20)) throw UsageError("-l with --iperf3 is at most 1M, iperf3's largest block");
  if (given.recv_mode && !given.reverse && !given.bidir)
    throw UsageError("--recv-mode applies only to testio's own receiving side: with --iperf3 that needs -R or --bidir");
  const bool udp = workloads::datagrams(config.spec);
  if (udp && !config.spec.timed() && (given.reverse || given.bidir))
    throw UsageError("--iperf3 -u -n counts what testio sends; with -R or --bidir give -t seconds");
  if (given.transfers || given.file || given.send_mode || given.iface_stats || ((given.rate || given.total_rate) && !udp) ||
      config.spec.fq_rate_bps > 0 || config.cport_first || config.spread_even || config.spec.rx_follow ||
      !config.spec.cpus.empty())
    throw UsageError("--iperf3 supports -C, -M, -N, -w, -l, -P, -t, -n, -O, -R, --bidir, and -u with -b; --transfers, -F, "
                     "--send-mode, --iface-stats, pacing, --cport, --spread, --rx-affinity and -A are testio-to-testio only");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
}

}  // namespace

void add_test_options(OptionTable& options) {
  // clang-format off
  options.add_options("Client")
    ("c,client", "Run as a client against the testio server at HOST, or download from an http:// or https:// URL", value(), "HOST")
    ("P,parallel", "Number of connections (same as the positional N)", value(), "N")
    ("t,time", "Seconds to send for", value().default_value("10"), "SECONDS")
    ("n,bytes", "Send this many bytes in total, split over the connections, instead of a time",
       value(), "BYTES")
    ("i,interval", "Seconds between interval reports; 0 for none", value().default_value("1"),
       "SECONDS")
    ("O,omit", "Seconds of warm-up to send first and leave out of the summary (shown, marked omitted)",
       value().default_value("0"), "SECONDS")
    ("T,threads", "Worker threads on each side (default: min(N, cores))", value(), "THREADS")
    ("l,length,buffer", "Bytes per read/write call, e.g. 128K, 2M, 2MiB", value().default_value("2M"), "SIZE")
    ("w,window", "Socket buffer size (SO_SNDBUF/SO_RCVBUF) on both sides (default: kernel autotuning)",
       value(), "SIZE")
    ("recv-mode", "How the receiver reads: recv (new buffer per call), recv_into (reused buffer), "
                  "trunc (MSG_TRUNC, discarded in the kernel), splice (socket -> pipe -> /dev/null), "
                  "mmap (TCP_ZEROCOPY_RECEIVE)",
       value().default_value("recv_into"), "MODE")
    ("send-mode", "How the sender writes: send (copy from a reused buffer), zerocopy (MSG_ZEROCOPY), "
                  "sendfile (from -F or a memfd)",
       value().default_value("send"), "MODE")
    ("engine", "What drives the data connections on both sides: asio (an event loop per worker), threads "
               "(a blocking thread per connection), uring (an io_uring per worker). Default: uring where it runs "
               "the test's modes (a side that cannot set io_uring up runs asio), else asio",
       value(), "ENGINE")
    ("iface-stats", "Each interval, rx/tx rate and packets per NIC on both sides, from the kernel's counters; "
       "default: the interface of the route to the peer (a bond: its members). Name them as --iface-stats=eth0,eth1",
       value().implicit_value(""), "IFACE,...")
    ("iperf3", "The server is a stock iperf3 -s: speak its protocol (TCP, or UDP with -u)")
    ("R,reverse", "The server sends, the client receives")
    ("bidir", "Both send at once, N connections each way")
    ("diagnose", "After the test, run a few short variations chosen by its verdict (twice the connections, "
                 "twice the buffer, --recv-mode trunc, more threads, pinning) and report what each changed")
    ("diagnose-time", "--diagnose: seconds for all the variations together (default 20)", value(), "SECONDS");
  // clang-format on
  // clang-format off
  options.add_options("Positional")
    ("connections", "Number of connections", values());
  // clang-format on
}

namespace {

void fill_diagnose(const ParsedOptions& args, config::Config& config) {
  config.diagnose = args.count("diagnose") > 0;
  if (!args.count("diagnose-time")) return;
  if (!config.diagnose) throw UsageError("--diagnose-time bounds --diagnose's variations: add --diagnose");
  std::string text = args.value("diagnose-time");
  double seconds = util::parse_seconds(text, "--diagnose-time");
  if (!(seconds >= 2 && seconds <= 3600))
    throw UsageError("--diagnose-time must be between 2 and 3600 seconds, got " + text);
  config.diagnose_time_s = seconds;
}

}  // namespace

void fill_test(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  fill_iface_stats(args, config.spec, given);  // first: it explains a misplaced interface name
  fill_extent(args, config.spec, given);
  fill_modes(args, config.spec, given);
  config.iperf3 = given.iperf3 = args.count("iperf3") > 0;
  fill_diagnose(args, config);
  // iperf3's own default block, which a datagram workload's group replaces with its own: iperf3
  // servers of 3.12 refuse more than 1 MiB.
  if (config.iperf3 && !given.buffer && !given.profile_buffer) config.spec.buffer = 128 * 1024;
}

void check_test(const config::Config& config, const GivenOptions& given) {
  if (config.diagnose && config.role == config::Role::server)
    throw UsageError("--diagnose is a client option: the client runs the variations against this server");
  if (config.diagnose && config.mesh)
    throw UsageError("--diagnose runs one client's variations; --mesh runs many tests at once");
  check_extent(config, given);
  check_iface_stats(config, given);
  check_iperf3(config, given);
}

// The tuning options: what the client sets on both sides' data connections, and pacing.
namespace {

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

}  // namespace

void add_tuning_options(OptionTable& options) {
  // clang-format off
  options.add_options("Tuning")
    ("C,linux-congestion,congestion", "TCP congestion control on both sides, e.g. cubic, bbr, reno", value(),
       "ALGO")
    ("M,set-mss", "TCP maximum segment size, set before connecting so the SYN announces it",
       value(), "BYTES")
    ("N,no-delay", "TCP_NODELAY on both sides (no Nagle)")
    ("A,affinity", "Pin worker threads to these CPUs (round robin); the server follows unless it pins itself",
       value(), "CPULIST")
    ("cport", "Data connection i uses source port PORT+i (from a range PORT-LAST), so flows hash predictably",
       value(), "PORT[-LAST]")
    ("b,bandwidth,bitrate", "Pace each connection to RATE bits/s in the application, e.g. 500M, 2G",
       value(), "RATE")
    ("total-rate", "Pace the test to RATE bits/s in total, split evenly over the connections",
       value(), "RATE")
    ("fq-rate", "Kernel pacing per connection (SO_MAX_PACING_RATE), RATE bits/s", value(),
       "RATE")
    ("spread", "With 'even', choose the source ports of the flows the client sends so they divide evenly over "
               "a multipath route's nexthops or a layer3+4 bond's members (checked against their counters)",
       value(), "even")
    ("rx-affinity", "With 'follow', pin the workers of both sides and run each receiving connection on the worker "
                    "of the CPU its packets are processed on (SO_INCOMING_CPU)", value(), "follow")
    ("no-lowat", "Leave SO_RCVLOWAT and TCP_NOTSENT_LOWAT at the kernel's defaults on both sides (testio sets them "
                 "from each stream's measured rate)");
  // clang-format on
}

void fill_tuning(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
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
  if (auto affinity = typed(args, "rx-affinity")) {
    if (*affinity != "follow") throw UsageError("--rx-affinity takes 'follow', got '" + *affinity + "'");
    spec.rx_follow = true;
  }
  if (auto spread = typed(args, "spread")) {
    if (*spread != "even") throw UsageError("--spread takes 'even', got '" + *spread + "'");
    config.spread_even = true;
    // The split is checked against the interfaces' own counters.
    if (!spec.iface_stats) spec.iface_stats.emplace();
  }
  auto rate = typed(args, "bitrate"), total_rate = typed(args, "total-rate"), fq_rate = typed(args, "fq-rate");
  given.rate = rate.has_value();
  given.total_rate = total_rate.has_value();
  // -b 0, as in iperf3: unpaced (a UDP test's default is iperf3's 1 Mbit/s).
  if (rate) spec.rate_bps = *rate == "0" ? 0 : util::parse_rate(*rate, "-b/--bitrate");
  if (total_rate) spec.rate_bps = util::parse_rate(*total_rate, "--total-rate") / spec.connections;
  if (fq_rate) spec.fq_rate_bps = util::parse_rate(*fq_rate, "--fq-rate");
  given.client_tuning = args.count("set-mss") || args.count("cport") || rate || total_rate || fq_rate ||
                        args.count("no-lowat") || args.count("spread") || args.count("rx-affinity");
}

void check_tuning(const config::Config& config, const GivenOptions& given) {
  if (given.rate && given.total_rate) throw UsageError("-b and --total-rate exclude each other");
  if (given.reverse && given.bidir) throw UsageError("-R and --bidir exclude each other");
  if ((given.reverse || given.bidir) && given.rr)
    throw UsageError(std::string(given.reverse ? "-R" : "--bidir") +
                     " applies to bulk tests; --rr, --transfers and --raw have their own directions");
  if (config.spread_even) {
    if (config.cport_first) throw UsageError("--spread even and --cport both choose the source ports: give one");
    if (given.reverse)
      throw UsageError("--spread even chooses the ports of the flows the client sends; with -R the server sends "
                       "(--bidir spreads the client's half)");
    if (given.rr || given.transfers || given.raw)
      throw UsageError("--spread even applies to bulk tests; --rr, --transfers and --raw open their connections "
                       "their own way");
  }
  if (config.spec.rx_follow && (given.rr || given.transfers || given.raw))
    throw UsageError("--rx-affinity follow applies to bulk tests' receiving connections");
  if (config.spec.rx_follow && config.spec.engine == spec::Engine::threads)
    throw UsageError("--rx-affinity follow needs workers shared by connections; --engine threads runs a thread per "
                     "connection");
  if (!config.cport_first) return;
  const std::uint32_t ports = config.cport_last - config.cport_first + 1u;
  const std::uint32_t opened = config.spec.data_connections();
  if (ports < opened)
    throw UsageError("--cport gives " + std::to_string(ports) + " ports for " + std::to_string(opened) +
                     " connections; give a range PORT-LAST with one port per connection");
}

// --raw, -F and --hash: plain TCP peers, and files sent with their digests.
namespace {

// -F to a testio server: the file goes out once, split over the connections, and both sides hash it.
void check_file_send(const config::Config& config, const GivenOptions& given) {
  if (config.role != config::Role::client || given.raw || !given.file) return;
  if (given.time || given.bytes) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.rr || given.transfers) throw UsageError("-F sends a file; it does not go with --rr or --transfers");
  if (given.omit) throw UsageError("-O does not apply to -F: the whole file is the test");
  if ((given.reverse || given.bidir) && !given.iperf3)
    throw UsageError(std::string(given.reverse ? "-R" : "--bidir") +
                     " does not go with -F: the file is what the client sends, and only forward");
}

}  // namespace

void add_raw_options(OptionTable& options) {
  // clang-format off
  options.add_options("Raw TCP")
    ("raw", "Plain TCP, no testio protocol: with -s a sink any nc/socat can send to; with -c send to any receiver")
    ("hash", "Digest of the bytes with --raw: sha1, sha256 or none", value().default_value("sha1"),
       "NAME")
    ("F,file", "Client: send this file (with --raw to any receiver; to a testio server both sides compare "
               "digests). Server: the content --transfers download",
       value(), "FILE");
  // clang-format on
}

// --raw, -F and --hash: a digest is computed where a file is sent (-F) or a raw peer sends.
void fill_raw(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  config.raw = given.raw = args.count("raw") > 0;
  given.hash = args.count("hash") > 0;
  const std::string hash = args.value("hash");
  const util::HashKind kind =
      parse_name<util::HashKind>(hash, util::hash_from_string, "--hash '" + hash + "' is not one of sha1, sha256, none");
  if (auto file = typed(args, "file")) {
    given.file = true;
    config.file = *file;
  }
  // A raw sink and a raw sender hash what crosses; --raw --rr echoes and a testio server sinks.
  const bool hashes = config.raw ? !args.count("rr") : given.file && !args.count("server");
  config.spec.hash = hashes ? kind : util::HashKind::none;
  // -F to a testio server is counted by the file's size, so its rules see the test it will be. A
  // file that cannot be read stays for the client to say so when it opens it.
  struct stat file{};
  const bool sent_to_testio = given.file && !config.raw && args.count("client");
  if (sent_to_testio && ::stat(config.file.c_str(), &file) == 0 && file.st_size > 0) {
    config.spec.total_bytes = static_cast<std::uint64_t>(file.st_size);
    config.spec.duration_s = 0;
  }
}

void check_raw(const config::Config& config, const GivenOptions& given) {
  check_file_send(config, given);
  if (!given.raw) {
    if (given.hash && !given.file) throw UsageError("--hash applies to --raw and -F");
    return;
  }
  if (config.role != config::Role::client) return;
  if (given.file && (given.time || given.bytes)) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.omit) throw UsageError("-O needs the testio protocol: a plain receiver counts from the first byte");
  if (given.interval && given.rr) throw UsageError("-i applies to --raw sends; --rr --raw reports at the end");
  if (given.recv_mode || given.window) throw UsageError("--recv-mode and -w need the testio protocol, not --raw");
  if (given.transfers) throw UsageError("--transfers does not go with --rr or --raw");
  if (given.reverse || given.bidir)
    throw UsageError("-R and --bidir apply to bulk tests; --rr, --transfers and --raw have their own directions");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode) throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (!config.spec.marks_follow_rate)
    throw UsageError("--no-lowat applies to bulk tests; --rr, --transfers and --raw leave the marks to the kernel");
  if (config.cport_first) throw UsageError("--cport applies to a testio test's data connections, not --raw");
  if (given.iface_stats) throw UsageError("--iface-stats needs the testio protocol, not --raw");
}

// Metrics: the server's /metrics endpoint and the client's textfile for node_exporter.

void add_metrics_options(OptionTable& options) {
  // clang-format off
  options.add_options("Metrics")
    ("metrics", "Server: serve Prometheus metrics at http://ADDRESS:PORT/metrics (docs/metrics.md)",
       value(), "ADDRESS:PORT")
    ("prometheus", "Client: write the test's result for node_exporter's textfile collector to FILE "
                   "(a temporary file renamed over it)", value(), "FILE");
  // clang-format on
}

void fill_metrics(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  if (auto listen = typed(args, "metrics")) config.metrics_listen = *listen;
  if (auto file = typed(args, "prometheus")) config.prometheus_file = *file;
  given.metrics = !config.metrics_listen.empty();
  given.prometheus = !config.prometheus_file.empty();
}

void check_metrics(const config::Config& config, const GivenOptions& given) {
  const bool server = config.role == config::Role::server;
  if (given.metrics) {
    if (!server) throw UsageError("--metrics is a server option; a client writes its result with --prometheus FILE");
    if (!metrics::is_listen_address(config.metrics_listen))
      throw UsageError("--metrics '" + config.metrics_listen + "' is not ADDRESS:PORT (e.g. 127.0.0.1:9200 or [::1]:9200)");
  }
  if (given.prometheus) {
    if (server) throw UsageError("--prometheus is a client option; a server serves its counters with --metrics");
    const std::string& file = config.prometheus_file;
    if (file.back() == '/') throw UsageError("--prometheus '" + file + "' names a directory; give a file name");
    const std::size_t slash = file.rfind('/');
    try {
      workloads::check_writable_directory(slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash),
                                          "--prometheus's directory");
    } catch (const std::runtime_error& error) {
      throw UsageError(error.what());
    }
  }
}

// Mesh: every pair of a fleet's MPI ranks (mpirun ... testio --mesh).

void add_mesh_options(OptionTable& options) {
  // clang-format off
  options.add_options("Mesh")
    ("mesh", "Under mpirun: each rank serves on its -B address, then the test runs between every pair of ranks "
             "in rounds; rank 0 prints one report (docs/mesh.md)")
    ("mesh-schedule", "Which pairs: all (every ordered pair), pairs (each pair once, the lower rank the client), "
                      "ring (each rank to the next: a quick pass)", value(), "SCHEDULE")
    ("mesh-slow", "Name the hosts that sent less than this share of the median host",
       value(), "FRACTION")
    ("mesh-results", "Rank 0 appends each round's pairs to FILE as JSON lines as they arrive, so a run cut "
                     "short (a rank that died) keeps every round it finished", value(), "FILE");
  // clang-format on
}

void fill_mesh(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  config.mesh = given.mesh = args.count("mesh") > 0;
  given.mesh_options = args.count("mesh-schedule") > 0 || args.count("mesh-slow") > 0 || args.count("mesh-results") > 0;
  if (auto results = typed(args, "mesh-results")) {
    if (results->empty()) throw UsageError("--mesh-results needs a file name");
    config.mesh_results = *results;
  }
  if (auto schedule = typed(args, "mesh-schedule")) {
    if (!mesh::parse_schedule(*schedule))
      throw UsageError("--mesh-schedule '" + *schedule + "' is not one of all, pairs, ring");
    config.mesh_schedule = *schedule;
  }
  if (auto slow = typed(args, "mesh-slow")) {
    char* end = nullptr;
    config.mesh_slow_fraction = std::strtod(slow->c_str(), &end);
    if (end == slow->c_str() || *end || !(config.mesh_slow_fraction > 0 && config.mesh_slow_fraction < 1))
      throw UsageError("--mesh-slow '" + *slow + "' is not a fraction between 0 and 1 (e.g. 0.8)");
  }
}

void check_mesh(const config::Config& config, const GivenOptions& given) {
  if (!given.mesh) {
    if (given.mesh_options) throw UsageError("--mesh-schedule and --mesh-slow apply to --mesh");
    if (config.bind_address.find("{rank}") != std::string::npos)
      throw UsageError("-B's {rank} is the MPI rank of --mesh; give an address");
    return;
  }
  if (!mesh::World::available())
    throw UsageError("this testio was built without MPI, so --mesh cannot run: apt-get install libopenmpi-dev "
                     "openmpi-bin, then build it again (meson finds MPI by itself)");
  if (given.server || given.client)
    throw UsageError("--mesh runs a server and clients on every rank itself; leave out -s and -c");
  if (config.raw || config.iperf3 || given.transfers || given.urls || given.prometheus || given.file || given.metrics)
    throw UsageError("--mesh runs testio's bulk, -u and --rr tests; --raw, --iperf3, --transfers, URLs, -F, "
                     "--metrics and --prometheus are for one pair");
}

}  // namespace testio::cli
