// The options that say what test a client runs.
#include "cli/groups.hpp"

#include <algorithm>
#include <vector>

#include "net/nic_counters.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

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
    // refused as such (validate.cpp).
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
               "(a blocking thread per connection), uring (an io_uring per worker)",
       value().default_value("asio"), "ENGINE")
    ("iface-stats", "Each interval, rx/tx rate and packets per NIC on both sides, from the kernel's counters; "
       "default: the interface of the route to the peer (a bond: its members). Name them as --iface-stats=eth0,eth1",
       value().implicit_value(""), "IFACE,...")
    ("iperf3", "The server is a stock iperf3 -s: speak its protocol (TCP, or UDP with -u)")
    ("R,reverse", "The server sends, the client receives")
    ("bidir", "Both send at once, N connections each way");
  // clang-format on
  // clang-format off
  options.add_options("Positional")
    ("connections", "Number of connections", values());
  // clang-format on
}

void fill_test(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  fill_iface_stats(args, config.spec, given);  // first: it explains a misplaced interface name
  fill_extent(args, config.spec, given);
  fill_modes(args, config.spec, given);
  config.iperf3 = given.iperf3 = args.count("iperf3") > 0;
  // iperf3's own default block, which a datagram workload's group replaces with its own: iperf3
  // servers of 3.12 refuse more than 1 MiB.
  if (config.iperf3 && !given.buffer && !given.profile_buffer) config.spec.buffer = 128 * 1024;
}

void check_test(const config::Config& config, const GivenOptions& given) {
  check_extent(config, given);
  check_iface_stats(config, given);
  check_iperf3(config, given);
}

}  // namespace testio::cli
