#include "cli/validate.hpp"

#include <string>

#include "net/access_list.hpp"
#include "net/nic_counters.hpp"
#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

void check_one_role(const GivenOptions& given) {
  if (given.server && given.client)
    throw UsageError("-s and -c exclude each other: run a server or a client, not both");
  if (!given.server && !given.client)
    throw UsageError("say -s to serve tests or -c HOST to run one (see testio --help)");
}

void check_role_specific(const config::Config& config, const GivenOptions& given) {
  if (config.role == config::Role::server) {
    struct Named { bool given; const char* name; };
    // A raw sink has no client to tell it its buffer size or threads.
    for (Named option : {Named{given.connections, "a connection count"}, Named{given.time, "-t"},
                         Named{given.bytes, "-n"}, Named{given.threads && !given.raw, "-T"},
                         Named{given.buffer && !given.raw, "-l"}, Named{given.window, "-w"},
                         Named{given.transfers, "--transfers"}, Named{given.size, "--size"},
                         Named{given.reuse, "--reuse"}, Named{given.save, "--save"}, Named{given.force, "--force"},
                         Named{given.recv_mode, "--recv-mode"}, Named{given.send_mode, "--send-mode"},
                         Named{given.engine, "--engine"},
                         Named{given.interval, "-i"},
                         Named{given.omit, "-O"}})
      if (option.given)
        throw UsageError(std::string(option.name) +
                         " is a client option: the client tells the server what to run");
  } else if (given.one_off) {
    throw UsageError("-1 is a server option");
  } else if (given.server_limits) {
    throw UsageError("--max-tests, --allow, --handshake-timeout and --max-frame are server options");
  }
}

void check_host(const config::Config& config) {
  if (config.role == config::Role::client && config.host.empty())
    throw UsageError("-c needs the server's host name or address");
}

void check_family(const GivenOptions& given) {
  if (given.ipv4 && given.ipv6) throw UsageError("-4 and -6 exclude each other");
}

void check_connections(const config::Config& config) {
  if (config.connections == 0) throw UsageError("the connection count must be at least 1");
  if (config.connections > config.limits.max_connections)
    throw UsageError("the connection count " + std::to_string(config.connections) +
                     " is above the cap of " + std::to_string(config.limits.max_connections));
}

void check_duration(const config::Config& config, const GivenOptions& given) {
  if (given.time && given.bytes) throw UsageError("-t and -n exclude each other: give a time or a byte count");
  if (config.total_bytes == 0 && config.duration_s <= 0)
    throw UsageError("-t must be more than 0 seconds");
  if (config.duration_s > config.limits.max_duration_s)
    throw UsageError("-t " + std::to_string(config.duration_s) + " is above the cap of " +
                     std::to_string(static_cast<long>(config.limits.max_duration_s)) + " seconds");
  if (given.bytes && config.total_bytes == 0) throw UsageError("-n must be more than 0 bytes");
}

void check_reporting(const config::Config& config, const GivenOptions& given) {
  if (given.json && given.json_stream) throw UsageError("--json and --json-stream exclude each other");
  if (config.interval_s > 0 && config.interval_s < config.limits.min_interval_s)
    throw UsageError("-i must be 0 or at least " + std::to_string(config.limits.min_interval_s).substr(0, 3) +
                     " seconds");
  if (config.interval_s > config.limits.max_duration_s) throw UsageError("-i is above the cap of a day");
  if (config.omit_s > config.limits.max_duration_s) throw UsageError("-O is above the cap of a day");
}

void check_limits(const config::Config& config) {
  const config::Limits& limits = config.limits;
  if (limits.max_tests < 1 || limits.max_tests > 1024) throw UsageError("--max-tests must be between 1 and 1024");
  if (limits.max_connections < 1 || limits.max_connections > 65535)
    throw UsageError("--max-connections must be between 1 and 65535");
  if (limits.max_buffer < 1 || limits.max_buffer > (1ull << 30)) throw UsageError("--max-buffer must be between 1 and 1G");
  if (limits.max_duration_s < 1) throw UsageError("--max-duration must be at least 1 second");
  if (limits.handshake_timeout_s < 0.1 || limits.handshake_timeout_s > 600)
    throw UsageError("--handshake-timeout must be between 0.1 and 600 seconds");
  if (!config.allow.empty()) {
    try {
      net::AccessList::parse(config.allow);
    } catch (const std::invalid_argument& error) {
      throw UsageError(error.what());
    }
  }
}

void check_raw(const config::Config& config, const GivenOptions& given) {
  if (config.role == config::Role::server && given.file && given.raw)
    throw UsageError("-F on a server is what --transfers download; a raw sink only receives");
  if (config.role == config::Role::server && given.hash && !given.raw)
    throw UsageError("--hash on a server applies to --raw sinks; a client's -F test names its own digest");
  if (!given.raw) {
    if (given.hash && !given.file) throw UsageError("--hash applies to --raw and -F");
    return;
  }
  if (config.role == config::Role::client) {
    if (config.connections != 1 && !given.rr)
      throw UsageError("--raw sends over one connection; drop the connection count (or add --rr)");
    if (given.file && (given.time || given.bytes)) throw UsageError("-F sends the whole file: drop -t and -n");
    if (given.omit || given.interval) throw UsageError("-i and -O need the testio protocol, not --raw");
    if (given.recv_mode || given.window) throw UsageError("--recv-mode and -w need the testio protocol, not --raw");
  }
}

void check_rr(const config::Config& config, const GivenOptions& given) {
  if (!given.rr) {
    if (given.rr_options) throw UsageError("--msize, --num and --depth apply to --rr tests");
    return;
  }
  if (config.role == config::Role::server) throw UsageError("--rr is a client option: the server echoes on request");
  if (config.msize == 0) throw UsageError("--msize must be at least 1 byte");
  if (config.msize > config.limits.max_buffer)
    throw UsageError("--msize " + util::format_size(config.msize) + " is above the cap of " +
                     util::format_size(config.limits.max_buffer));
  if (config.depth < 1 || config.depth > 65536) throw UsageError("--depth must be between 1 and 65536");
  if (given.num && config.messages == 0) throw UsageError("--num must be at least 1");
  if (given.num && given.time) throw UsageError("--num and -t exclude each other: count messages or time them");
  if (given.bytes) throw UsageError("-n counts bytes of a bulk test; --rr counts messages with --num");
  if (given.buffer || given.recv_mode) throw UsageError("-l and --recv-mode apply to bulk tests; --rr sends --msize");
  if (given.file) throw UsageError("-F sends a file; it does not go with --rr");
}

// -F to a testio server: the file goes out once, split over the connections, and both sides hash it.
void check_file_send(const config::Config& config, const GivenOptions& given) {
  if (config.role != config::Role::client || given.raw || !given.file) return;
  if (given.time || given.bytes) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.rr || given.transfers) throw UsageError("-F sends a file; it does not go with --rr or --transfers");
  if (config.recv_mode == config::RecvMode::trunc || config.recv_mode == config::RecvMode::splice)
    throw UsageError("--recv-mode " + std::string(config::to_string(config.recv_mode)) +
                     " discards the bytes in the kernel, so the server could not hash them");
  if (given.omit) throw UsageError("-O does not apply to -F: the whole file is the test");
}

void check_transfers(const config::Config& config, const GivenOptions& given) {
  if (!given.transfers) {
    if (given.size || given.reuse || given.save || given.force)
      throw UsageError("--size, --reuse, --save and --force apply to --transfers");
    return;
  }
  const config::Limits& limits = config.limits;
  if (config.transfers == 0) throw UsageError("--transfers must be at least 1");
  if (config.transfers > limits.max_transfers)
    throw UsageError("--transfers " + std::to_string(config.transfers) + " is above the cap of " +
                     std::to_string(limits.max_transfers));
  if (!given.size) throw UsageError("--transfers needs --size: the bytes each transfer downloads");
  if (config.transfer_size == 0) throw UsageError("--size must be at least 1 byte");
  if (config.transfer_size > limits.max_transfer_size)
    throw UsageError("--size " + util::format_size(config.transfer_size) + " is above the cap of " +
                     util::format_size(limits.max_transfer_size));
  if (given.force && !given.save) throw UsageError("--force applies to --save");
  if (given.time || given.bytes) throw UsageError("--transfers runs until COUNT transfers are done: drop -t and -n");
  if (given.rr || given.raw) throw UsageError("--transfers does not go with --rr or --raw");
  if (given.omit) throw UsageError("-O does not apply to --transfers");
  if (given.recv_mode)
    throw UsageError("--recv-mode applies to bulk tests; --transfers reads into one buffer (or its --save file)");
}

void check_tuning(const config::Config& config, const GivenOptions& given) {
  if (config.role == config::Role::server && given.client_tuning)
    throw UsageError("-M, --cport, -b, --total-rate, --fq-rate and --no-lowat are client options: the client's "
                     "data connections carry them");
  if (config.role == config::Role::server && (!config.congestion.empty() || config.no_delay))
    throw UsageError("-C and -N are client options: the client asks for them on both sides");
  if (given.rate && given.total_rate) throw UsageError("-b and --total-rate exclude each other");
  const std::string& name = config.congestion;
  if (!name.empty() && (name.size() > 15 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") !=
                                                std::string::npos))
    throw UsageError("-C '" + name + "' is not a congestion control name (see "
                     "/proc/sys/net/ipv4/tcp_available_congestion_control)");
  if (config.cport_first) {
    std::uint32_t ports = config.cport_last - config.cport_first + 1u;
    const std::uint32_t opened = config.bidir ? 2 * config.connections : config.connections;
    if (ports < opened)
      throw UsageError("--cport gives " + std::to_string(ports) + " ports for " + std::to_string(opened) +
                       " connections; give a range PORT-LAST with one port per connection");
    if (given.transfers) throw UsageError("--cport does not go with --transfers: each transfer needs a fresh port");
    if (given.raw) throw UsageError("--cport applies to a testio test's data connections, not --raw");
  }
  if (given.send_mode && (given.rr || given.transfers || given.raw))
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if ((config.rate_bps > 0 || config.fq_rate_bps > 0) && (given.rr || given.transfers))
    throw UsageError("-b, --total-rate and --fq-rate pace bulk tests; --rr and --transfers run closed loops");
  if (!config.rate_lowat && (given.rr || given.transfers || given.raw))
    throw UsageError("--no-lowat applies to bulk tests; --rr, --transfers and --raw leave the marks to the kernel");
  if (config.rate_bps > 0 && config.rate_bps < 8000) throw UsageError("-b must be at least 8k (1000 bytes/s)");
}

// --engine with the modes it runs; each engine moves bulk data only.
void check_engine(const config::Config& config, const GivenOptions& given) {
  if (given.engine && (given.rr || given.transfers || given.raw || given.iperf3))
    throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.threads && config.engine == config::Engine::threads)
    throw UsageError("--engine threads runs one thread per connection: drop -T");
  if (std::string refusal = config::engine_refusal(config.engine, config.recv_mode, config.send_mode); !refusal.empty())
    throw UsageError(refusal);
}

void check_iface_stats(const config::Config& config, const GivenOptions& given) {
  if (!given.iface_stats) return;
  if (config.role == config::Role::server)
    throw UsageError("--iface-stats is a client option: the server samples its side when the client asks");
  if (given.raw) throw UsageError("--iface-stats needs the testio protocol, not --raw");
  if (config.iface_names.size() > net::kMaxNics)
    throw UsageError("--iface-stats watches at most " + std::to_string(net::kMaxNics) + " interfaces");
  for (const std::string& name : config.iface_names)
    if (!net::nic_exists(name))
      throw UsageError("--iface-stats: there is no network interface '" + name + "' here (see ip link)");
}

void check_threads(const config::Config& config, const GivenOptions& given) {
  if (given.threads && config.threads == 0) throw UsageError("-T must be at least 1");
  if (config.threads > config.limits.max_threads)
    throw UsageError("-T " + std::to_string(config.threads) + " is above the cap of " +
                     std::to_string(config.limits.max_threads) + " threads");
}

void check_sizes(const config::Config& config) {
  if (config.buffer == 0) throw UsageError("-l must be at least 1 byte");
  if (config.buffer > config.limits.max_buffer)
    throw UsageError("-l " + util::format_size(config.buffer) + " is above the cap of " +
                     util::format_size(config.limits.max_buffer));
  if (config.window > config.limits.max_window)
    throw UsageError("-w " + util::format_size(config.window) + " is above the cap of " +
                     util::format_size(config.limits.max_window));
}

// -R and --bidir: a bulk test the other way, or both ways at once.
void check_direction(const config::Config& config, const GivenOptions& given) {
  if (!given.reverse && !given.bidir) return;
  if (config.role == config::Role::server)
    throw UsageError("-R and --bidir are client options: the client tells the server which way to send");
  if (given.reverse && given.bidir) throw UsageError("-R and --bidir exclude each other");
  const char* which = given.reverse ? "-R" : "--bidir";
  if (given.rr || given.transfers || given.raw)
    throw UsageError(std::string(which) + " applies to bulk tests; --rr, --transfers and --raw have their own directions");
  if (given.file && !given.iperf3)
    throw UsageError(std::string(which) + " does not go with -F: the file is what the client sends, and only forward");
  if (given.bidir && !given.iperf3 && config.connections > config.limits.max_connections / 2)
    throw UsageError("--bidir opens twice the connection count: at most " +
                     std::to_string(config.limits.max_connections / 2) + " each way");
}

// iperf3's protocol carries a bulk TCP test and nothing of testio's own.
void check_iperf3(const config::Config& config, const GivenOptions& given) {
  if (!given.iperf3) return;
  if (config.role == config::Role::server)
    throw UsageError("--iperf3 is a client option: testio -s answers iperf3 clients on its port by itself");
  if (given.raw || given.rr) throw UsageError("--iperf3 runs iperf3's bulk TCP test: drop --raw and --rr");
  if (given.psk_file) throw UsageError("--psk-file is testio's own key; iperf3's RSA authentication is not supported");
  if (config.connections > 128) throw UsageError("iperf3 allows at most 128 streams (-P)");
  if (config.buffer > (1u << 20)) throw UsageError("-l with --iperf3 is at most 1M, iperf3's largest block");
  if (given.recv_mode && !given.reverse && !given.bidir)
    throw UsageError("--recv-mode applies only to testio's own receiving side: with --iperf3 that needs -R or --bidir");
  if (given.transfers || given.file || given.send_mode || given.iface_stats || given.rate || given.total_rate ||
      config.fq_rate_bps > 0 || config.cport_first || !config.cpus.empty())
    throw UsageError("--iperf3 supports -C, -M, -N, -w, -l, -P, -t, -n, -O, -R and --bidir; --transfers, -F, "
                     "--send-mode, --iface-stats, pacing, --cport and -A are testio-to-testio only");
}

}  // namespace

void validate(const config::Config& config, const GivenOptions& given) {
  check_one_role(given);
  check_role_specific(config, given);
  check_host(config);
  check_family(given);
  check_connections(config);
  check_duration(config, given);
  check_limits(config);
  check_raw(config, given);
  check_rr(config, given);
  check_file_send(config, given);
  check_transfers(config, given);
  check_reporting(config, given);
  check_tuning(config, given);
  check_threads(config, given);
  check_sizes(config);
  check_iface_stats(config, given);
  check_engine(config, given);
  check_direction(config, given);
  check_iperf3(config, given);
}

}  // namespace testio::cli
