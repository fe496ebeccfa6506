// The plain description of what the user asked for, filled by cli/ and read by everything else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/digest.hpp"

namespace testio::config {

enum class Role { server, client };
enum class AddressFamily { any, v4, v6 };
// text: the human table; json: one iperf3-shaped document; json_stream: one JSON line per event.
enum class OutputFormat { text, json, json_stream };

// How the receiver reads. recv allocates a fresh buffer per call (the cost Python's recv pays),
// recv_into reuses one buffer per connection, trunc discards in the kernel with MSG_TRUNC,
// splice moves socket -> pipe -> /dev/null, mmap maps the receive queue (TCP_ZEROCOPY_RECEIVE).
enum class RecvMode { recv, recv_into, trunc, splice, mmap };

// How a sender writes: send copies from a reused buffer; zerocopy adds MSG_ZEROCOPY (completions
// from the error queue); sendfile sends from a file (-F) or a memfd holding the generated block.
enum class SendMode { send, zerocopy, sendfile };

// What drives the data connections: Asio's reactor, one io_context per worker (asio); a blocking
// thread per connection (threads); one io_uring per worker (uring).
enum class Engine { asio, threads, uring };

// Which way a bulk test's data flows: client to server, server to client, or both at once over
// N connections each way.
enum class Direction { forward, reverse, bidir };

std::string_view to_string(Engine engine) noexcept;
std::optional<Engine> engine_from_string(std::string_view text) noexcept;
std::string_view to_string(Direction direction) noexcept;
std::optional<Direction> direction_from_string(std::string_view text) noexcept;
std::string_view to_string(SendMode mode) noexcept;
// Why an engine cannot run a receive or send mode, in one sentence; empty when it can. The
// client checks before it connects, the server checks the request.
std::string engine_refusal(Engine engine, RecvMode recv_mode, SendMode send_mode);
std::optional<SendMode> send_mode_from_string(std::string_view text) noexcept;
std::string_view to_string(RecvMode mode) noexcept;
std::optional<RecvMode> recv_mode_from_string(std::string_view text) noexcept;

// Caps the server enforces on what a client asks for; the client checks the same caps up front so
// a user hears about a bad value before any connection is made.
struct Limits {
  std::uint32_t max_connections = 1024;
  std::uint64_t max_buffer = 256ull << 20;     // 256 MiB per read/write call
  std::uint64_t max_window = 1ull << 30;       // 1 GiB socket buffer request
  double max_duration_s = 86400.0;             // one day
  std::uint32_t max_frame = 64 * 1024;         // control frame body
  std::uint32_t max_threads = 256;
  std::uint32_t max_tests = 1;                 // server: tests running at once (--max-tests)
  std::uint32_t max_pending = 1024;            // server: connections still in their handshake
  double handshake_timeout_s = 5.0;            // server: silence allowed before the preamble/request
  double min_interval_s = 0.1;                 // finer sampling would cost more than it shows
  std::uint32_t max_result_frame = 64u << 20;  // results carry every interval: the client allows more
  std::uint64_t max_transfers = 100'000'000;   // --transfers
  std::uint64_t max_transfer_size = 1ull << 40;  // --size: 1 TiB
};

inline constexpr std::uint16_t kDefaultPort = 5201;
inline constexpr std::uint64_t kDefaultBuffer = 2ull << 20;

struct Config {
  Role role = Role::client;
  std::string host;                 // client: where the server is
  std::string bind_address;         // server: listen address; client: source address
  std::string bind_device;          // -B ADDRESS%DEV: SO_BINDTODEVICE on every socket
  std::uint16_t port = kDefaultPort;
  AddressFamily family = AddressFamily::any;
  bool one_off = false;             // server: exit after one test

  std::uint32_t connections = 1;
  double duration_s = 10.0;
  std::uint64_t total_bytes = 0;    // 0 = timed test; otherwise split over the connections
  std::uint32_t threads = 0;        // 0 = min(connections, cores) on each side
  std::uint64_t buffer = kDefaultBuffer;
  std::uint64_t window = 0;         // 0 = kernel default (autotuning stays on)
  RecvMode recv_mode = RecvMode::recv_into;
  SendMode send_mode = SendMode::send;
  Engine engine = Engine::asio;     // --engine, on both sides
  double interval_s = 1.0;          // 0 = no interval reports
  double omit_s = 0;                // warm-up left out of the summary (sent on top of -t)

  OutputFormat output = OutputFormat::text;
  char unit = 'a';                  // -f: a(uto), k/m/g bits, K/M/G bytes
  std::string logfile;              // --logfile: report and diagnostics go there instead
  std::string psk_file;             // --psk-file: HMAC-SHA256 challenge-response on the control connection
  std::string allow;                // server: --allow CIDR list; empty = everyone
  bool rr = false;                  // --rr: request/response (echo) instead of bulk
  std::uint64_t msize = 1024;       // --msize: bytes per request (and per echo)
  std::uint64_t messages = 0;       // --num: requests per connection; 0 = for -t seconds
  std::uint32_t depth = 1;          // --depth: requests outstanding per connection

  bool raw = false;                 // --raw: plain TCP, no testio protocol (sink or sender)
  util::HashKind hash = util::HashKind::sha1;  // --hash for --raw
  std::string file;                 // -F: what a client sends (--raw, or to a testio server with digests);
                                    // on a server, what --transfers download
  std::uint64_t transfers = 0;      // --transfers: downloads of --size bytes, `connections` at a time
  std::uint64_t transfer_size = 0;  // --size
  bool reuse = false;               // --reuse: keep each connection for the next transfer
  std::string save_dir;             // --save: write each transfer to its own file there
  bool force = false;               // --force: overwrite existing files under --save

  // Tuning, each read back from the kernel and shown in the report.
  std::string congestion;           // -C: TCP_CONGESTION on both sides' data connections
  std::uint32_t mss = 0;            // -M: TCP_MAXSEG before connect, so the SYN announces it; 0 = path's
  bool no_delay = false;            // -N: TCP_NODELAY on both sides' data connections
  std::vector<std::uint32_t> cpus;  // -A: worker k runs on cpus[k % size]; empty = wherever the kernel likes
  std::uint16_t cport_first = 0;    // --cport: data connection i binds source port cport_first + i
  std::uint16_t cport_last = 0;
  double rate_bps = 0;              // -b (or --total-rate / N): per-connection pacing; 0 = unpaced
  double fq_rate_bps = 0;           // --fq-rate: SO_MAX_PACING_RATE per connection, paced by the kernel
  bool rate_lowat = true;           // SO_RCVLOWAT and TCP_NOTSENT_LOWAT follow each stream's rate; --no-lowat: the kernel's

  bool iface_stats = false;         // --iface-stats: NIC counters each interval, both sides
  std::vector<std::string> iface_names;  // its list; empty = the interface the test's route uses

  bool iperf3 = false;              // --iperf3: the server at -c is a stock iperf3 -s
  bool reverse = false;             // -R: the server sends
  bool bidir = false;               // --bidir: both send at once, N connections each way
  Direction direction() const noexcept {
    return bidir ? Direction::bidir : reverse ? Direction::reverse : Direction::forward;
  }

  int verbosity = 0;                // 0 quiet, 1 -v, 2 --debug
  Limits limits;
};

// Worker threads for `connections` streams: the request if given, else one per core, never more
// than there are streams.
std::uint32_t effective_threads(std::uint32_t requested, std::uint32_t connections) noexcept;
// The worker threads a bulk test's engine runs for `connections` data connections on one side:
// one per connection with Engine::threads, else effective_threads().
std::uint32_t worker_threads(Engine engine, std::uint32_t requested, std::uint32_t connections) noexcept;

}  // namespace testio::config
