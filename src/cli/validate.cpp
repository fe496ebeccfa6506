// The command line's own rules: which options go with which role, which exclude each other, and
// what only this side knows (--raw, --iperf3, -F, --save, --cport, interfaces). The rules of the
// test itself are workloads::check()'s, which the server applies to every request too.
#include "cli/validate.hpp"

#include <string>

#include "net/access_list.hpp"
#include "net/nic_counters.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

void check_roles(const config::Config& config, const GivenOptions& given) {
  if (given.server && given.client)
    throw UsageError("-s and -c exclude each other: run a server or a client, not both");
  if (!given.server && !given.client) throw UsageError("say -s to serve tests or -c HOST to run one (see testio --help)");
  if (config.role == config::Role::client && config.host.empty())
    throw UsageError("-c needs the server's host name or address");
  if (given.ipv4 && given.ipv6) throw UsageError("-4 and -6 exclude each other");
  if (config.role == config::Role::client && given.one_off) throw UsageError("-1 is a server option");
  if (config.role == config::Role::client && given.server_limits)
    throw UsageError("--max-tests, --allow, --handshake-timeout and --max-frame are server options");
}

void check_server_options(const config::Config& config, const GivenOptions& given) {
  if (config.role != config::Role::server) return;
  struct Named { bool given; const char* name; };
  // A raw sink has no client to tell it its buffer size or threads.
  for (Named option : {Named{given.connections, "a connection count"}, Named{given.time, "-t"}, Named{given.bytes, "-n"},
                       Named{given.threads && !given.raw, "-T"}, Named{given.buffer && !given.raw, "-l"},
                       Named{given.window, "-w"}, Named{given.transfers, "--transfers"}, Named{given.size, "--size"},
                       Named{given.reuse, "--reuse"}, Named{given.save, "--save"}, Named{given.force, "--force"},
                       Named{given.recv_mode, "--recv-mode"}, Named{given.send_mode, "--send-mode"},
                       Named{given.engine, "--engine"}, Named{given.interval, "-i"}, Named{given.omit, "-O"}})
    if (option.given)
      throw UsageError(std::string(option.name) + " is a client option: the client tells the server what to run");
  if (given.rr) throw UsageError("--rr is a client option: the server echoes on request");
  if (given.reverse || given.bidir)
    throw UsageError("-R and --bidir are client options: the client tells the server which way to send");
  if (given.client_tuning)
    throw UsageError("-M, --cport, -b, --total-rate, --fq-rate and --no-lowat are client options: the client's "
                     "data connections carry them");
  if (!config.spec.congestion.empty() || config.spec.no_delay)
    throw UsageError("-C and -N are client options: the client asks for them on both sides");
  if (given.iface_stats)
    throw UsageError("--iface-stats is a client option: the server samples its side when the client asks");
  if (given.iperf3) throw UsageError("--iperf3 is a client option: testio -s answers iperf3 clients on its port by itself");
  if (given.file && given.raw) throw UsageError("-F on a server is what --transfers download; a raw sink only receives");
  if (given.hash && !given.raw)
    throw UsageError("--hash on a server applies to --raw sinks; a client's -F test names its own digest");
}

void check_extent(const config::Config& config, const GivenOptions& given) {
  if (given.time && given.bytes) throw UsageError("-t and -n exclude each other: give a time or a byte count");
  if (given.bytes && config.spec.total_bytes == 0) throw UsageError("-n must be more than 0 bytes");
  if (given.threads && config.spec.threads == 0) throw UsageError("-T must be at least 1");
  if (given.json && given.json_stream) throw UsageError("--json and --json-stream exclude each other");
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
    if (given.hash && !given.file) throw UsageError("--hash applies to --raw and -F");
    return;
  }
  if (config.role != config::Role::client) return;
  if (config.spec.connections != 1 && !given.rr)
    throw UsageError("--raw sends over one connection; drop the connection count (or add --rr)");
  if (given.file && (given.time || given.bytes)) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.omit || given.interval) throw UsageError("-i and -O need the testio protocol, not --raw");
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

// --rr: what was typed for it, and what was typed that does not go with it.
void check_rr(const config::Config& config, const GivenOptions& given) {
  if (!config.spec.is("rr")) {
    if (given.rr_options) throw UsageError("--msize, --num and --depth apply to --rr tests");
    return;
  }
  if (given.num && config.spec.rr.messages == 0) throw UsageError("--num must be at least 1");
  if (given.num && given.time) throw UsageError("--num and -t exclude each other: count messages or time them");
  if (given.bytes) throw UsageError("-n counts bytes of a bulk test; --rr counts messages with --num");
  if (given.buffer || given.recv_mode) throw UsageError("-l and --recv-mode apply to bulk tests; --rr sends --msize");
  if (given.file) throw UsageError("-F sends a file; it does not go with --rr");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode)
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
}

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

void check_transfers(const config::Config& config, const GivenOptions& given) {
  if (!config.spec.is("transfers")) {
    if (given.size || given.reuse || given.save || given.force)
      throw UsageError("--size, --reuse, --save and --force apply to --transfers");
    return;
  }
  if (given.transfers && !given.size) throw UsageError("--transfers needs --size: the bytes each transfer downloads");
  if (given.force && !given.save) throw UsageError("--force applies to --save");
  if (given.time || given.bytes) throw UsageError("--transfers runs until COUNT transfers are done: drop -t and -n");
  if (given.rr || given.raw) throw UsageError("--transfers does not go with --rr or --raw");
  if (given.omit) throw UsageError("-O does not apply to --transfers");
  if (given.recv_mode)
    throw UsageError("--recv-mode applies to bulk tests; --transfers reads into one buffer (or its --save file)");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode)
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (config.cport_first) throw UsageError("--cport does not go with --transfers: each transfer needs a fresh port");
}

void check_client_tuning(const config::Config& config, const GivenOptions& given) {
  if (given.rate && given.total_rate) throw UsageError("-b and --total-rate exclude each other");
  if (given.reverse && given.bidir) throw UsageError("-R and --bidir exclude each other");
  if ((given.reverse || given.bidir) && given.rr)
    throw UsageError(std::string(given.reverse ? "-R" : "--bidir") +
                     " applies to bulk tests; --rr, --transfers and --raw have their own directions");
  if (!config.cport_first) return;
  const std::uint32_t ports = config.cport_last - config.cport_first + 1u;
  const std::uint32_t opened = config.spec.data_connections();
  if (ports < opened)
    throw UsageError("--cport gives " + std::to_string(ports) + " ports for " + std::to_string(opened) +
                     " connections; give a range PORT-LAST with one port per connection");
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
  if (given.transfers || given.file || given.send_mode || given.iface_stats || given.rate || given.total_rate ||
      config.spec.fq_rate_bps > 0 || config.cport_first || !config.spec.cpus.empty())
    throw UsageError("--iperf3 supports -C, -M, -N, -w, -l, -P, -t, -n, -O, -R and --bidir; --transfers, -F, "
                     "--send-mode, --iface-stats, pacing, --cport and -A are testio-to-testio only");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
}

}  // namespace

void validate(const config::Config& config, const GivenOptions& given) {
  check_roles(config, given);
  check_server_options(config, given);
  check_extent(config, given);
  check_limits(config);
  check_raw(config, given);
  check_rr(config, given);
  check_file_send(config, given);
  check_transfers(config, given);
  check_client_tuning(config, given);
  check_iface_stats(config, given);
  check_iperf3(config, given);
  // The test's own rules, as the server will apply them: one sentence, naming the option.
  try {
    workloads::check(config.spec, config.limits);
  } catch (const spec::SpecError& error) {
    throw UsageError(error.what());
  }
}

}  // namespace testio::cli
