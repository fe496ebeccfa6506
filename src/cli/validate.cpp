#include "cli/validate.hpp"

#include <string>

#include "net/access_list.hpp"
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
                         Named{given.buffer && !given.raw, "-l"}, Named{given.window, "-w"}, Named{given.file, "-F"},
                         Named{given.recv_mode, "--recv-mode"}, Named{given.interval, "-i"},
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
  if (!given.raw) {
    if (given.hash) throw UsageError("--hash applies to --raw transfers");
    if (given.file) throw UsageError("-F sends a file over plain TCP and needs --raw");
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

// iperf3's protocol carries a bulk TCP test and nothing of testio's own.
void check_iperf3(const config::Config& config, const GivenOptions& given) {
  if (!given.iperf3) {
    if (given.reverse) throw UsageError("-R is only supported with --iperf3 for now");
    if (given.bidir) throw UsageError("--bidir is only supported with --iperf3 for now");
    return;
  }
  if (config.role == config::Role::server)
    throw UsageError("--iperf3 is a client option: testio -s answers iperf3 clients on its port by itself");
  if (given.reverse && given.bidir) throw UsageError("-R and --bidir exclude each other");
  if (given.raw || given.rr) throw UsageError("--iperf3 runs iperf3's bulk TCP test: drop --raw and --rr");
  if (given.psk_file) throw UsageError("--psk-file is testio's own key; iperf3's RSA authentication is not supported");
  if (config.connections > 128) throw UsageError("iperf3 allows at most 128 streams (-P)");
  if (config.buffer > (1u << 20)) throw UsageError("-l with --iperf3 is at most 1M, iperf3's largest block");
  if (given.recv_mode && !given.reverse && !given.bidir)
    throw UsageError("--recv-mode applies only to testio's own receiving side: with --iperf3 that needs -R or --bidir");
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
  check_reporting(config, given);
  check_threads(config, given);
  check_sizes(config);
  check_iperf3(config, given);
}

}  // namespace testio::cli
