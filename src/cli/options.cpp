#include "cli/options.hpp"

#include <cxxopts.hpp>
#include <optional>
#include <set>
#include <vector>

#include "cli/fill.hpp"
#include "cli/profile.hpp"
#include "cli/validate.hpp"
#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

void add_general_options(cxxopts::Options& options) {
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
    ("config", "Read options from a JSON profile (keys are long option names, and \"spec\" a test spec, as a "
               "report's start.testio.spec); the command line overrides it",
       cxxopts::value<std::string>(), "FILE");
  // clang-format on
}

void add_server_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Server")
    ("s,server", "Run as a server: serve tests until killed (one at a time unless --max-tests)")
    ("1,one-off", "Server: exit after one test")
    ("max-tests", "Server: tests that may run at once; more get a busy answer", cxxopts::value<std::string>()->default_value("1"), "K")
    ("allow", "Server: talk only to peers in these networks, e.g. 198.18.0.0/15,::1", cxxopts::value<std::string>(), "CIDR,...")
    ("handshake-timeout", "Server: seconds a new connection may take to say who it is",
       cxxopts::value<std::string>()->default_value("5"), "SECONDS");
  // clang-format on
}

void add_request_response_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Request/response")
    ("rr", "Request/response: each connection sends --msize bytes, waits for the echo, repeats; "
           "reports messages/s and latency percentiles")
    ("msize", "Bytes per request (and per echo)", cxxopts::value<std::string>()->default_value("1K"), "SIZE")
    ("num", "Requests per connection (instead of -t)", cxxopts::value<std::string>(), "COUNT")
    ("depth", "Requests outstanding per connection", cxxopts::value<std::string>()->default_value("1"), "K");
  // clang-format on
}

void add_raw_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Raw TCP")
    ("raw", "Plain TCP, no testio protocol: with -s a sink any nc/socat can send to; with -c send to any receiver")
    ("hash", "Digest of the bytes with --raw: sha1, sha256 or none", cxxopts::value<std::string>()->default_value("sha1"),
       "NAME")
    ("F,file", "Client: send this file (with --raw to any receiver; to a testio server both sides compare "
               "digests). Server: the content --transfers download",
       cxxopts::value<std::string>(), "FILE");
  // clang-format on
}

void add_transfers_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Transfers")
    ("transfers", "Download COUNT transfers of --size bytes from the server, N at a time, each on a fresh "
                  "connection; reports transfers/s, connect and transfer time percentiles",
       cxxopts::value<std::string>(), "COUNT")
    ("size", "Bytes per transfer", cxxopts::value<std::string>(), "SIZE")
    ("reuse", "Keep each of the N connections for its next transfer")
    ("save", "Write each transfer to DIR/transfer-NNNN; an existing file is refused unless --force",
       cxxopts::value<std::string>(), "DIR")
    ("force", "With --save: overwrite existing files");
  // clang-format on
}

void add_limits_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Limits and security")
    ("psk-file", "Pre-shared key file: the server demands it, the client proves it (HMAC-SHA256)",
       cxxopts::value<std::string>(), "FILE")
    ("max-connections", "Cap on connections per test", cxxopts::value<std::string>()->default_value("1024"), "N")
    ("max-buffer", "Cap on -l", cxxopts::value<std::string>()->default_value("256M"), "SIZE")
    ("max-duration", "Cap on -t, -O and -i in seconds", cxxopts::value<std::string>()->default_value("86400"), "SECONDS")
    ("max-frame", "Server: cap on a control message's size", cxxopts::value<std::string>()->default_value("64K"), "SIZE");
  // clang-format on
}

void add_client_options(cxxopts::Options& options) {
  // clang-format off
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
  // clang-format on
}

void add_tuning_options(cxxopts::Options& options) {
  // clang-format off
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
  // clang-format on
}

void add_positional_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Positional")
    ("connections", "Number of connections", cxxopts::value<std::vector<std::string>>());
  // clang-format on
}

cxxopts::Options make_options() {
  cxxopts::Options options("testio",
                           "testio: multi-connection TCP throughput tester.\n"
                           "  testio -s                 serve tests\n"
                           "  testio -c HOST [N]        run a test with N connections");
  options.positional_help("[N]").show_positional_help();
  add_general_options(options);
  add_server_options(options);
  add_request_response_options(options);
  add_raw_options(options);
  add_transfers_options(options);
  add_limits_options(options);
  add_client_options(options);
  add_tuning_options(options);
  add_positional_options(options);
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

// Whether the command line set `key` itself, or an option that excludes it.
bool typed_over(const cxxopts::ParseResult& args, const std::string& key) {
  return args.count(key) > 0 || (key == "parallel" && args.count("connections") > 0) ||
         (key == "time" && args.count("bytes") > 0) || (key == "bytes" && args.count("time") > 0) ||
         (key == "json" && args.count("json-stream") > 0) || (key == "json-stream" && args.count("json") > 0) ||
         (key == "server" && args.count("client") > 0) || (key == "client" && args.count("server") > 0);
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  cxxopts::Options options = make_options();
  std::vector<std::string> tokens(argv, argv + argc);
  cxxopts::ParseResult args = parse_tokens(options, tokens);
  std::optional<Profile> profile;
  if (args.count("config")) {
    // The profile's entries go first and are dropped where the command line set the same thing;
    // its spec, if it has one, is the test the command line then changes.
    profile = read_profile(args["config"].as<std::string>(), profile_may_set,
                           [&](const std::string& key) { return typed_over(args, key); });
    tokens.insert(tokens.begin() + 1, profile->tokens.begin(), profile->tokens.end());
    args = parse_tokens(options, tokens);
  }
  if (args.count("help")) {
    parsed.action = ParsedCommandLine::Action::help;
    parsed.help_text = options.help({"General", "Server", "Client", "Tuning", "Request/response", "Transfers",
                                     "Raw TCP", "Limits and security"});
    return parsed;
  }
  if (args.count("version")) {
    parsed.action = ParsedCommandLine::Action::version;
    return parsed;
  }
  if (profile && profile->spec) parsed.config.spec = *profile->spec;
  GivenOptions given;
  fill_config(args, parsed.config, given, profile && profile->names_buffer);
  validate(parsed.config, given);
  return parsed;
}

}  // namespace testio::cli
