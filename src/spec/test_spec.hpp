// A test as both sides agree on it: written once, here. The same value is the client's request
// on the wire, the start of every report (start.testio.spec) and a --config profile's "spec"; its
// one JSON mapping is in spec_json.cpp, and the rules a test must keep are checked by
// workloads::check() on both sides (docs/architecture.md, "Parameters once").
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "spec/settings.hpp"
#include "util/digest.hpp"

namespace testio::spec {

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

std::string_view to_string(RecvMode mode) noexcept;
std::string_view to_string(SendMode mode) noexcept;
std::string_view to_string(Engine engine) noexcept;
std::string_view to_string(Direction direction) noexcept;
std::optional<RecvMode> recv_mode_from_string(std::string_view text) noexcept;
std::optional<SendMode> send_mode_from_string(std::string_view text) noexcept;
std::optional<Engine> engine_from_string(std::string_view text) noexcept;
std::optional<Direction> direction_from_string(std::string_view text) noexcept;

// Caps a server enforces on what a client asks for; the client checks the same caps before it
// connects, so a user hears about a bad value before any connection is made.
struct Limits {
  std::uint32_t max_connections = 4096;
  std::uint64_t max_buffer = 256ull << 20;     // 256 MiB per read/write call
  std::uint64_t max_window = 1ull << 30;       // 1 GiB socket buffer request
  double max_duration_s = 86400.0;             // one day
  std::uint32_t max_frame = 64 * 1024;         // control frame body
  std::uint32_t max_threads = 256;
  std::uint32_t max_tests = 1;                 // server: tests running at once (--max-tests)
  std::uint32_t max_tests_per_peer = 0;        // server: ... running or waiting from one address (0: no cap)
  std::uint32_t max_server_connections = 0;    // server: data connections of all its tests at once (0: no cap)
  std::uint32_t queue = 16;                    // server: tests waiting for a slot (--queue)
  std::uint32_t max_pending = 1024;            // server: connections still in their handshake
  std::uint32_t max_pending_per_peer = 32;     // ... from one address, beyond its running tests' own
  double handshake_timeout_s = 5.0;            // server: silence allowed before the preamble/request
  double min_interval_s = 0.1;                 // finer sampling would cost more than it shows
  std::uint32_t max_result_frame = 64u << 20;  // results carry every interval: the client allows more
  std::uint64_t max_transfers = 100'000'000;   // --transfers
  std::uint64_t max_transfer_size = 1ull << 40;  // --size: 1 TiB
  double max_total_rate_bps = 0;               // server: --server-bitrate-limit, a test's bits/s both ways (0: none)
  double total_rate_window_s = 5;              // ... averaged over this many seconds (0: since the start)
};

inline constexpr std::uint64_t kDefaultBuffer = 2ull << 20;

struct TestSpec {
  std::string workload = "stream";    // a name in workloads/registry.cpp: stream, rr, transfers, udp
  std::uint32_t connections = 1;      // N (each way with --bidir; transfer slots with --transfers)
  double duration_s = 10.0;           // the window; 0 when the test is counted instead
  std::uint64_t total_bytes = 0;      // -n (or -F's file size): split over the connections
  std::uint32_t threads = 0;          // -T on each side; 0 = min(connections, cores)
  std::uint64_t buffer = kDefaultBuffer;  // -l: bytes per read/write call
  std::uint64_t window = 0;           // -w: SO_SNDBUF/SO_RCVBUF; 0 = the kernel's autotuning
  RecvMode recv_mode = RecvMode::recv_into;
  SendMode send_mode = SendMode::send;
  Engine engine = Engine::asio;
  // The client chose `engine` itself (no --engine): a side that cannot set io_uring up runs asio
  // instead of refusing the test (engines::settle_default_engine).
  bool engine_fallback = false;
  Direction direction = Direction::forward;
  bool rx_follow = false;             // --rx-affinity follow: a receiving stream runs on the worker pinned to its packets' CPU
  bool marks_follow_rate = true;      // SO_RCVLOWAT/TCP_NOTSENT_LOWAT from each stream's rate (--no-lowat: false)
  double rate_bps = 0;                // -b (or --total-rate / N): per-connection pacing; 0 = unpaced
  double fq_rate_bps = 0;             // --fq-rate: SO_MAX_PACING_RATE on each sending connection
  double interval_s = 1.0;            // 0 = no interval reports
  double omit_s = 0;                  // warm-up sent first and left out of the summary
  util::HashKind hash = util::HashKind::none;  // -F: the receivers hash what they get
  std::string congestion;             // -C on both sides' data connections
  bool no_delay = false;              // -N on both sides' data connections
  bool repeating_payload = false;     // --repeating-payload: senders send ASCII digits, not the generated pattern
  std::uint32_t tos = 0;              // -S/--dscp: the TOS byte (0-255) of both sides' data packets; 0 = the kernel's
  std::vector<std::uint32_t> cpus;    // -A: the client's workers, and the server's unless it pins its own
  // --iface-stats: absent = off; otherwise the names to watch on each side that has them (empty:
  // the interface the data connections use).
  std::optional<std::vector<std::string>> iface_stats;
  // What only the workload reads (rr's --msize, --transfers' count, -u's --batch): its own part,
  // typed in its folder (workloads/part.hpp), carried here by name.
  Settings settings;
  // A composed test: the workloads that run beside this one in the same window, each with its own
  // connections, direction, settings and section of the report. Each is a whole spec of one
  // workload (its own `with` empty) whose test-wide fields are this one's (share_test_wide()).
  std::vector<TestSpec> with;
  // A workload of a composed test that runs for part of the window (latency under load's phases):
  // its streams begin `begins_s` after the test starts and end `ends_s` after it (0: at the end).
  double begins_s = 0;
  double ends_s = 0;

  // A timed test ends at its window; a counted one (-n, --num, --transfers) when its count is done.
  bool timed() const noexcept { return duration_s > 0; }
  // -O plus -t for a timed test, 0 for a counted one.
  double window_s() const noexcept { return timed() ? omit_s + duration_s : 0; }
  bool is(std::string_view name) const noexcept { return workload == name; }
  // Data connections each side opens: twice N with --bidir.
  std::uint32_t data_connections() const noexcept {
    return direction == Direction::bidir ? 2 * connections : connections;
  }
  bool operator==(const TestSpec&) const = default;
};

// The most workloads one test runs side by side.
inline constexpr std::size_t kMaxWorkloads = 8;

// The fields every workload of a composed test shares: the window (-t, -O), the intervals, -A and
// --iface-stats. Copies them from `test` to `part`.
void share_test_wide(const TestSpec& test, TestSpec& part);
bool shares_test_wide(const TestSpec& test, const TestSpec& part);
// The test's workloads one by one, each a spec of its own: `test` without its `with`, then each of
// its `with`.
std::vector<TestSpec> workloads_of(const TestSpec& test);
// The inverse: one spec holding the others as its `with`.
TestSpec composed(std::vector<TestSpec> workloads);
// What a composed test keeps beyond each workload's own rules: at most kMaxWorkloads, none nested,
// every one timed over the test's own window, their connections together within the cap. Throws
// SpecError.
void check_composition(const TestSpec& test, const Limits& limits);

// A spec that breaks a rule or cannot be read: one sentence fit to show the user. The client
// turns it into a usage error (exit 2), the server into a refusal of the request.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The one JSON mapping: every field under its name. The request leaves out what its peer need not
// hear (fields newer than protocol version 1 at their defaults, the senders' settings of a forward
// test); a report writes every field, so it says the whole test and runs it again as a profile.
enum class Form { request, report };
nlohmann::json to_json(const TestSpec& spec, Form form = Form::request);
// Fields the wire has always carried must be there (Presence::as_on_the_wire); a profile may name
// only those it changes (Presence::any). Checks types, never rules; throws SpecError.
enum class Presence { as_on_the_wire, any };
TestSpec spec_from_json(const nlohmann::json& message, Presence presence = Presence::as_on_the_wire,
                        TestSpec defaults = {});

// The rules every workload shares (caps, sizes, ranges, names): workloads::check() adds each
// workload's own. Throws SpecError naming the client's option.
void check_common(const TestSpec& spec, const Limits& limits);
// Why an engine cannot run a receive or send mode, in one sentence; empty when it can.
std::string engine_refusal(Engine engine, RecvMode recv_mode, SendMode send_mode);

// Worker threads for `connections` streams: the request if given, else one per core, never more
// than there are streams.
std::uint32_t effective_threads(std::uint32_t requested, std::uint32_t connections) noexcept;
// The worker threads a bulk test's engine runs for `connections` data connections on one side:
// one per connection with Engine::threads, else effective_threads().
std::uint32_t worker_threads(Engine engine, std::uint32_t requested, std::uint32_t connections) noexcept;

}  // namespace testio::spec
