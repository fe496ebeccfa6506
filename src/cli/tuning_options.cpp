// The tuning options: what the client sets on both sides' data connections, and pacing.
#include "cli/groups.hpp"

#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

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
}  // namespace testio::cli
