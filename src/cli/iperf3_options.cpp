#include "cli/iperf3_options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;
using Fit = Iperf3Fit;

// In the order of iperf3 3.21's longopts table (src/iperf_api.c), which its -h follows.
constexpr bool kHere = true;
constexpr std::array<Iperf3Option, 73> kOptions{{
    {"p", "port", "n", Fit::same, "-p: the server's port (default 5201)"},
    {"f", "format", "[kmgtKMGT]", Fit::same, "-f: k, m, g (bits) or K, M, G (bytes); t and T are refused (testio has no tera unit)"},
    {"i", "interval", "n", Fit::same, "-i: seconds between interval reports, 0 for none"},
    {"D", "daemon", "", Fit::mapped,
     "-D: the server detaches into the background (its report and log go to --logfile, else nowhere)", kHere},
    {"1", "one-off", "", Fit::same, "-1: the server exits after one test"},
    {"V", "", "", Fit::mapped, "-V: testio's -v (per-connection lines and the test's settings)", kHere},
    {"J", "json", "", Fit::same, "-J: one JSON document shaped like iperf3's"},
    {"", "json-stream", "", Fit::same, "--json-stream: JSON lines, one per event"},
    {"", "json-stream-full-output", "", Fit::mapped,
     "--json-stream-full-output: with --json-stream, the whole -J document after the events, as iperf3 prints it", kHere},
    {"v", "version", "", Fit::differs,
     "testio's -v is --verbose; alone (without -s or -c) it prints the version as iperf3's does; --version is the same"},
    {"s", "server", "", Fit::same, "-s: serve tests"},
    {"c", "client", "host[%dev]", Fit::same, "-c HOST: run a test against HOST (an interface goes in -B ADDRESS%DEV or --bind-dev)"},
    {"u", "udp", "", Fit::same, "-u: UDP flows with iperf3's datagram header"},
    {"b", "bitrate", "n[KMGT]", Fit::same, "-b: each connection's rate in bits/s (a /burst is refused: testio paces each send)"},
    {"b", "bandwidth", "n[KMGT]", Fit::same, "--bandwidth: the old name of -b"},
    {"", "server-bitrate-limit", "n[KMGT][/n]", Fit::same,
     "--server-bitrate-limit RATE[/SECONDS]: the server refuses a test whose -b asks for more than RATE in all, "
     "and ends one whose bytes both ways average above it over SECONDS (default 5; 0: the whole test)", kHere},
    {"", "server-max-duration", "n", Fit::mapped,
     "--server-max-duration: testio's --max-duration (the server refuses a longer test rather than cutting it)", kHere},
    {"t", "time", "n", Fit::same, "-t: seconds to send for"},
    {"n", "bytes", "n[KMGT]", Fit::same, "-n: bytes to send in total"},
    {"k", "blockcount", "n[KMGT]", Fit::mapped, "-k: -n of that many -l blocks", kHere},
    {"l", "length", "n[KMGT]", Fit::same, "-l: bytes per read and write call"},
    {"P", "parallel", "n", Fit::same, "-P: the number of connections"},
    {"R", "reverse", "", Fit::same, "-R: the server sends"},
    {"", "bidir", "", Fit::same, "--bidir: both send at once"},
    {"w", "window", "n[KMGT]", Fit::same, "-w: SO_SNDBUF and SO_RCVBUF on both sides"},
    {"B", "bind", "host[%dev]", Fit::same, "-B: the listen or source address, %DEV its interface"},
    {"", "bind-dev", "dev", Fit::mapped, "--bind-dev: -B %DEV (SO_BINDTODEVICE)", kHere},
    {"", "cport", "port", Fit::same, "--cport: the data connections' source port (testio: PORT+i for connection i)"},
    {"M", "set-mss", "n", Fit::same, "-M: TCP_MAXSEG before connecting"},
    {"N", "no-delay", "", Fit::same, "-N: TCP_NODELAY on both sides"},
    {"4", "version4", "", Fit::same, "-4: IPv4 only"},
    {"6", "version6", "", Fit::same, "-6: IPv6 only"},
    {"S", "tos", "n", Fit::mapped, "-S: the TOS byte (decimal, 0octal or 0xhex) of both sides' data packets", kHere},
    {"", "dscp", "dscp", Fit::mapped, "--dscp: -S of a DSCP (0-63, or a name: ef, af11-af43, cs0-cs7, va, le)", kHere},
    {"", "extra-data", "str", Fit::mapped, "--extra-data: \"extra_data\" in the JSON document, as iperf3 writes it", kHere},
    {"L", "flowlabel", "n", Fit::same, "-L: the IPv6 flow label (1 to 0xfffff) of the client's data connections",
     kHere},
    {"Z", "zerocopy", "", Fit::mapped, "-Z: --send-mode zerocopy (MSG_ZEROCOPY; --send-mode sendfile is iperf3's sendfile())", kHere},
    {"O", "omit", "n", Fit::same, "-O: seconds of warm-up left out of the summary"},
    {"F", "file", "name", Fit::same, "-F: the client sends the file (the server compares digests; it writes no file)"},
    {"", "repeating-payload", "", Fit::mapped,
     "--repeating-payload: TCP senders (either side) send ASCII digits over and over instead of the generated pattern", kHere},
    {"", "timestamps", "[=format]", Fit::mapped, "--timestamps[=FORMAT]: strftime(3) time before every text line (default \"%c \")", kHere},
    {"A", "affinity", "n/n,m", Fit::same, "-A: the CPUs of the worker threads (a list; the server follows)"},
    {"T", "title", "str", Fit::differs,
     "testio's -T is --threads (a number); --title is iperf3's title: every text line begins \"TITLE:  \"", kHere},
    {"C", "congestion", "algo", Fit::same, "-C: TCP congestion control on both sides"},
    {"C", "linux-congestion", "algo", Fit::same, "--linux-congestion: the old name of -C"},
    {"", "sctp", "", Fit::refused, "--sctp: testio tests TCP and UDP only; use iperf3 --sctp", kHere},
    {"", "nstreams", "n", Fit::refused, "--nstreams: an SCTP option; testio tests TCP and UDP only", kHere},
    {"X", "xbind", "name", Fit::refused, "-X: an SCTP option; testio tests TCP and UDP only (-B binds)", kHere},
    {"I", "pidfile", "file", Fit::mapped, "-I: writes the process's pid to FILE, removed when it exits", kHere},
    {"", "logfile", "file", Fit::same, "--logfile: the report and diagnostics go to FILE"},
    {"", "forceflush", "", Fit::mapped, "--forceflush: each text line is flushed as it ends", kHere},
    {"", "get-server-output", "", Fit::mapped,
     "--get-server-output: the server's side of the test after the client's: \"server_output_json\" in -J, "
     "\"Server output:\" in text (an iperf3 server's own output with --iperf3); a stock iperf3 client gets "
     "testio's server's streams as it counted them", kHere},
    {"", "udp-counters-64bit", "", Fit::same,
     "--udp-counters-64bit: testio's datagrams count in 64 bits; toward iperf3 (--iperf3) it asks for its 64-bit counters"},
    {"", "no-fq-socket-pacing", "", Fit::mapped,
     "--no-fq-socket-pacing: accepted; testio paces in the application and uses SO_MAX_PACING_RATE only with --fq-rate", kHere},
    {"", "dont-fragment", "", Fit::same,
     "--dont-fragment: -u's datagrams leave with DF set (IP_PMTUDISC_DO): one bigger than the path's MTU fails to send"},
    {"", "skip-rx-copy", "", Fit::mapped, "--skip-rx-copy: --recv-mode trunc (MSG_TRUNC: the kernel discards the bytes)", kHere},
    {"", "username", "username", Fit::refused,
     "--username: testio authenticates with a pre-shared key: --psk-file on both sides (docs/security.md)", kHere},
    {"", "rsa-public-key-path", "file", Fit::refused,
     "--rsa-public-key-path: testio authenticates with a pre-shared key: --psk-file on both sides (docs/security.md)", kHere},
    {"", "rsa-private-key-path", "file", Fit::refused,
     "--rsa-private-key-path: testio authenticates with a pre-shared key: --psk-file on both sides (docs/security.md)", kHere},
    {"", "authorized-users-path", "file", Fit::refused,
     "--authorized-users-path: testio authenticates with a pre-shared key: --psk-file on both sides (docs/security.md)",
     kHere},
    {"", "time-skew-threshold", "seconds", Fit::refused,
     "--time-skew-threshold: testio's pre-shared key answers a fresh challenge, so no clock is compared: --psk-file", kHere},
    {"", "use-pkcs1-padding", "", Fit::refused,
     "--use-pkcs1-padding: testio authenticates with a pre-shared key, no RSA: --psk-file", kHere},
    {"", "fq-rate", "n[KMGT]", Fit::same, "--fq-rate: SO_MAX_PACING_RATE on each sending connection"},
    {"", "pacing-timer", "n[KMGT]", Fit::mapped,
     "--pacing-timer: accepted; testio has no pacing timer to set: each connection waits for its own next send", kHere},
    {"", "connect-timeout", "n", Fit::mapped, "--connect-timeout: milliseconds a connection may take to open (default 10000)", kHere},
    {"", "idle-timeout", "n", Fit::mapped,
     "--idle-timeout: with -1, the server exits (0) when no test comes within N seconds; without -1 accepted, as "
     "each test ends by --stall-timeout and nothing needs restarting", kHere},
    {"", "rcv-timeout", "#", Fit::mapped,
     "--rcv-timeout: testio's --stall-timeout in milliseconds (at least 2000: peers say they are alive every second)", kHere},
    {"", "snd-timeout", "#", Fit::mapped,
     "--snd-timeout: TCP_USER_TIMEOUT in milliseconds on the control and data connections (either side)", kHere},
    {"", "cntl-ka", "[=#/#/#]", Fit::mapped,
     "--cntl-ka[=IDLE/INTERVAL/COUNT]: TCP keepalive on the client's control connection (each part may be empty: "
     "the kernel's)", kHere},
    {"m", "mptcp", "", Fit::mapped,
     "-m: MPTCP data connections, their subflows in the report; the server listens for MPTCP with -s --mptcp "
     "(an iperf3 server needs nothing), else they fall back to TCP with a warning", kHere},
    {"", "gsro", "", Fit::mapped, "--gsro: UDP GSO and GRO, which testio uses unless --no-gso or --no-gro", kHere},
    {"d", "debug", "[=#]", Fit::same, "-d: --debug, diagnostics on stderr (one level)"},
    {"h", "help", "", Fit::same, "-h: the options"},
}};

// TOS and DSCP as iperf3 reads them: a number in C's bases (12, 014, 0xc), or a DSCP's name.
std::uint32_t parse_byte(const std::string& text, std::uint32_t most, const char* what) {
  char* end = nullptr;
  const unsigned long value = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || text[0] == '-' || value > most)
    throw UsageError(std::string(what) + " '" + text + "' must be a number from 0 to " + std::to_string(most) +
                     " (decimal, 0octal or 0xhex)");
  return static_cast<std::uint32_t>(value);
}

std::uint32_t parse_dscp(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (text == "ef") return 46;
  if (text == "va") return 44;
  if (text == "le") return 1;
  if (text.size() == 3 && text.rfind("cs", 0) == 0 && text[2] >= '0' && text[2] <= '7') return 8u * (text[2] - '0');
  if (text.size() == 4 && text.rfind("af", 0) == 0 && text[2] >= '1' && text[2] <= '4' && text[3] >= '1' && text[3] <= '3')
    return 8u * (text[2] - '0') + 2u * (text[3] - '0');
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0]))) return parse_byte(text, 63, "--dscp");
  throw UsageError("--dscp '" + text + "' is not a DSCP: 0-63, or ef, va, le, cs0-cs7, af11-af43");
}

std::uint32_t parse_milliseconds(const std::string& text, const char* what) {
  const std::uint64_t ms = util::parse_count(text, what);
  if (ms == 0 || ms > 86'400'000) throw UsageError(std::string(what) + " takes milliseconds from 1 to 86400000");
  return static_cast<std::uint32_t>(ms);
}

// --cntl-ka's IDLE/INTERVAL/COUNT, any of them empty (the kernel's): "", "30", "30/5/3", "//3".
config::Keepalive parse_keepalive(const std::string& text) {
  std::uint32_t parts[3] = {0, 0, 0};
  std::size_t start = 0;
  for (int i = 0; i < 3 && start <= text.size(); ++i) {
    const std::size_t slash = std::min(text.find('/', start), text.size());
    const std::string part = text.substr(start, slash - start);
    if (!part.empty()) parts[i] = parse_u32(part, "--cntl-ka");
    if (parts[i] > 32767) throw UsageError("--cntl-ka's times and count must be at most 32767");
    start = slash + 1;
  }
  if (start <= text.size()) throw UsageError("--cntl-ka takes at most three parts: IDLE/INTERVAL/COUNT");
  return {parts[0], parts[1], parts[2]};
}

// --server-bitrate-limit RATE[/SECONDS], with iperf3's bounds on SECONDS.
void parse_total_rate_cap(const std::string& text, config::Config& config) {
  if (config.role != config::Role::server) throw UsageError("--server-bitrate-limit is a server option: it goes with -s");
  const std::size_t slash = text.find('/');
  config.limits.max_total_rate_bps = util::parse_rate(text.substr(0, slash), "--server-bitrate-limit");
  if (slash == std::string::npos) return;
  const double window_s = util::parse_seconds(text.substr(slash + 1), "--server-bitrate-limit's averaging time");
  if (window_s != 0 && (window_s < 0.1 || window_s > 60))
    throw UsageError("--server-bitrate-limit's averaging time must be 0 (the whole test) or 0.1 to 60 seconds");
  config.limits.total_rate_window_s = window_s;
}

// -S, --dscp, -k, -Z, --repeating-payload, --skip-rx-copy: what the test does.
void fill_test_meanings(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  const bool tos = args.count("tos") > 0;
  if (tos && args.count("dscp")) throw UsageError("-S and --dscp both set the TOS byte: give one");
  if (tos) spec.tos = parse_byte(args.value("tos"), 255, "-S/--tos");
  if (args.count("dscp")) spec.tos = parse_dscp(args.value("dscp")) << 2;
  if (auto blocks = typed(args, "blockcount")) {
    if (given.time || given.bytes) throw UsageError("-k counts blocks instead of -t or -n: give one of them");
    const std::uint64_t count = util::parse_size(*blocks, "-k/--blockcount");
    if (count == 0) throw UsageError("-k must be at least 1 block");
    if (count > UINT64_MAX / spec.buffer) throw UsageError("-k times -l is more bytes than a test can count");
    spec.total_bytes = count * spec.buffer;
    given.bytes = true;
  }
  if (args.count("zerocopy")) {
    if (given.send_mode && spec.send_mode != spec::SendMode::zerocopy)
      throw UsageError("-Z is --send-mode zerocopy: it excludes another --send-mode");
    spec.send_mode = spec::SendMode::zerocopy;
    given.send_mode = true;
  }
  if (args.count("repeating-payload")) {
    if (given.file) throw UsageError("--repeating-payload and -F both say what to send: give one");
    if (given.udp) throw UsageError("--repeating-payload applies to TCP streams: -u's datagrams carry their header");
    spec.repeating_payload = true;
  }
  if (args.count("skip-rx-copy")) {
    if (given.recv_mode && spec.recv_mode != spec::RecvMode::trunc)
      throw UsageError("--skip-rx-copy is --recv-mode trunc: it excludes another --recv-mode");
    spec.recv_mode = spec::RecvMode::trunc;
    given.recv_mode = true;
  }
}

// --title, --timestamps, --forceflush, --extra-data, -V, -D, -I: the report and the process.
void fill_report_meanings(const ParsedOptions& args, config::Config& config) {
  if (auto title = typed(args, "title")) config.title = *title;
  if (args.count("timestamps")) config.timestamp_format = args.value("timestamps");
  config.flush_lines = args.count("forceflush") > 0;
  if (auto extra = typed(args, "extra-data")) config.extra_data = *extra;
  config.server_output = args.count("get-server-output") > 0;
  config.stream_full_document = args.count("json-stream-full-output") > 0;
  if (config.stream_full_document && config.output != config::OutputFormat::json_stream)
    throw UsageError("--json-stream-full-output goes with --json-stream");
  if (args.count("V")) config.verbosity = std::max(config.verbosity, 1);
  config.daemon = args.count("daemon") > 0;
  if (config.daemon && config.role != config::Role::server) throw UsageError("-D is a server option: it goes with -s");
  if (auto file = typed(args, "pidfile")) config.pidfile = *file;
  if (auto seconds = typed(args, "idle-timeout")) {
    if (config.role != config::Role::server) throw UsageError("--idle-timeout is a server option: it goes with -s");
    config.idle_timeout_s = util::parse_seconds(*seconds, "--idle-timeout");
  }
}

// --connect-timeout, --snd-timeout, --cntl-ka, --mptcp, -L, --server-bitrate-limit, --rcv-timeout, --server-max-duration, --bind-dev:
// connections and caps.
void fill_connection_meanings(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  if (auto ms = typed(args, "connect-timeout")) config.connect_timeout_ms = parse_milliseconds(*ms, "--connect-timeout");
  if (auto ms = typed(args, "snd-timeout")) config.snd_timeout_ms = parse_milliseconds(*ms, "--snd-timeout");
  if (args.count("cntl-ka")) config.control_keepalive = parse_keepalive(args.value("cntl-ka"));
  config.mptcp = args.count("mptcp") > 0;
  if (auto label = typed(args, "flowlabel")) {
    config.flow_label = parse_byte(*label, 0xfffff, "-L/--flowlabel");
    if (!config.flow_label) throw UsageError("-L's flow label must be from 1 to 0xfffff (0 is no label)");
    if (config.role != config::Role::client) throw UsageError("-L is a client option: it goes with -c");
  }
  if (config.mptcp && given.udp) throw UsageError("--mptcp opens TCP connections: -u's flows are UDP");
  if (config.mptcp && (given.transfers || !config.urls.empty()))
    throw UsageError("--mptcp applies to the test's own data connections: --transfers and URL downloads open theirs "
                     "as plain TCP");
  if (auto ms = typed(args, "rcv-timeout")) {
    if (args.count("stall-timeout")) throw UsageError("--rcv-timeout is --stall-timeout in milliseconds: give one");
    const std::uint32_t wait = parse_milliseconds(*ms, "--rcv-timeout");
    if (wait < 2000)
      throw UsageError("--rcv-timeout must be at least 2000 ms: testio's peers say they are alive once a second");
    config.stall_timeout_s = wait / 1000.0;
  }
  if (auto seconds = typed(args, "server-max-duration")) {
    if (args.count("max-duration")) throw UsageError("--server-max-duration is --max-duration: give one");
    config.limits.max_duration_s = util::parse_seconds(*seconds, "--server-max-duration");
    given.server_limits = true;
  }
  if (auto limit = typed(args, "server-bitrate-limit")) parse_total_rate_cap(*limit, config);
  if (auto device = typed(args, "bind-dev")) {
    if (!config.bind_device.empty() && config.bind_device != *device)
      throw UsageError("--bind-dev " + *device + " and -B %" + config.bind_device + " name two interfaces");
    if (device->empty() || device->size() > 15 || device->find('/') != std::string::npos)
      throw UsageError("--bind-dev '" + *device + "' is not a network interface name");
    config.bind_device = *device;
  }
}

// A letter that is testio's own (Fit::differs) is left out: only the long name is iperf3's here.
std::string option_names(const Iperf3Option& option) {
  if (option.fit == Fit::differs) return std::string(option.long_name);
  std::string names;
  if (!option.short_name.empty()) names += option.short_name;
  if (!option.short_name.empty() && !option.long_name.empty()) names += ",";
  return names + std::string(option.long_name);
}

}  // namespace

std::span<const Iperf3Option> iperf3_options() { return kOptions; }

void add_iperf3_options(OptionTable& options) {
  for (const Iperf3Option& option : kOptions) {
    if (!option.registered_here) continue;
    const std::string group = option.fit == Fit::refused ? "iperf3 (refused)" : "iperf3";
    const std::string names = option_names(option);
    const std::string help(option.testio.substr(option.testio.find(": ") + 2));
    std::string argument(option.argument);
    for (char& c : argument) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));  // as testio's
    if (option.argument.empty()) {
      options.add_options(group)(names, help);
    } else if (option.argument.front() == '[') {  // an optional "=VALUE"
      options.add_options(group)(names, help, value().implicit_value(option.long_name == "timestamps" ? "%c " : ""),
                                 argument.substr(2, argument.size() - 3));
    } else {
      options.add_options(group)(names, help, value(), argument);
    }
  }
}

void fill_iperf3(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  for (const Iperf3Option& option : kOptions)
    if (option.fit == Fit::refused && option.registered_here &&
        args.count(std::string(option.long_name.empty() ? option.short_name : option.long_name)))
      throw UsageError(std::string(option.testio));
  fill_test_meanings(args, config, given);
  fill_report_meanings(args, config);
  fill_connection_meanings(args, config, given);
}

std::string iperf3_options_markdown() {
  static constexpr const char* kFits[] = {"same", "mapped", "differs", "refused"};
  std::string table = "| iperf3 | argument | in testio | what testio does |\n|---|---|---|---|\n";
  for (const Iperf3Option& option : kOptions) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) of "literal" + std::string.
    table.append("| ");
    if (!option.short_name.empty()) table.append("`-").append(option.short_name).append("`");
    if (!option.short_name.empty() && !option.long_name.empty()) table.append(", ");
    if (!option.long_name.empty()) table.append("`--").append(option.long_name).append("`");
    table.append(" | ");
    if (!option.argument.empty()) table.append("`").append(option.argument).append("`");
    table.append(" | ").append(kFits[static_cast<int>(option.fit)]).append(" | ");
    for (char c : option.testio) {
      if (c == '|') table.push_back('\\');  // a bar inside a Markdown cell
      table.push_back(c);
    }
    table.append(" |\n");
  }
  return table;
}

}  // namespace testio::cli
