// The testio control protocol, version 4 (version 1 could not run workloads side by side: its
// request had no "with"; version 2 said a workload's settings beside the spec's own fields, where
// version 3 carries them as one object, "settings"; version 4 may run a workload for part of the
// window, "begins_s" and "ends_s", which version 3 would ignore and run for all of it). Every connection to the server begins with a 24-byte
// preamble; the kind byte says whether it is the control connection or a data connection.
//
//   client                                              server
//     |--- control connect, preamble{kind 'C'} ------------>|  sniff: testio, version ok?
//     |<-- frame hello{auth, nonce} ------------------------|  (or error{busy})
//     |--- frame test_request{connections, time, auth} --->|  check the key's answer, every cap
//     |<-- frame test_accepted{test_id, threads} ----------|  (or frame error{busy|invalid})
//     |=== N data connects, preamble{'D', test_id, i} ====>|  attach stream i of the test (numbered across
//     |                                                     |  the workloads of a composed test, in order)
//     |<-- frame start ------------------------------------|  all N arrived, receivers reading
//     |=== data for -t seconds or -n bytes ===============>|
//     |=== shutdown(SHUT_WR) on every data connection ====>|  receivers read to EOF
//     |--- frame sender_done{streams[], cpu} ------------->|  (a composed test: one of each per workload,
//     |<-- frame results{streams[], intervals[], cpu} -----|  in order)  after EOF on every stream
//     |--- close ------------------------------------------>|  ready for the next test
//
// A frame is a 4-byte big-endian length and a JSON object (control/framing.hpp). Either side may
// send error{message} instead of the expected frame and close; see docs/protocol.md.
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lifecycle/exchange.hpp"
#include "spec/test_spec.hpp"
#include "net/flow_path.hpp"
#include "stats/core_spread.hpp"
#include "stats/summary.hpp"
#include "util/digest.hpp"

namespace testio::control {

// First byte non-printable and non-ASCII: an iperf3 cookie and a plain-text client never start so.
inline constexpr std::array<unsigned char, 4> kMagic = {0x9e, 't', 'i', 'o'};
inline constexpr std::uint8_t kProtocolVersion = 5;
inline constexpr std::size_t kPreambleBytes = 24;

enum class ConnectionKind : std::uint8_t { control = 'C', data = 'D' };

struct Preamble {
  ConnectionKind kind = ConnectionKind::control;
  std::uint8_t version = kProtocolVersion;
  std::uint64_t test_id = 0;   // data connections: the id from test_accepted
  std::uint32_t stream = 0;    // data connections: 0 .. connections-1
};

using PreambleBytes = std::array<unsigned char, kPreambleBytes>;
PreambleBytes encode_preamble(const Preamble& preamble) noexcept;

struct DecodedPreamble {
  enum class Status { ok, not_testio, bad_kind, bad_version } status = Status::ok;
  Preamble preamble;
};
DecodedPreamble decode_preamble(const PreambleBytes& bytes) noexcept;
bool starts_with_magic(const unsigned char* bytes, std::size_t size) noexcept;

// The lifecycle's words for what the two sides exchange, which this protocol carries.
using lifecycle::DirectedResults;
using lifecycle::PeerError;
using lifecycle::ProtocolError;
using lifecycle::SideResults;
using lifecycle::TestRequest;

// A control connection that failed authentication; the server says so and closes.
class AuthError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};
// The server's first frame on a control connection: who it is, and the challenge when it
// requires a key ("hmac-sha256"; "none" otherwise).
struct ServerHello {
  std::string server_version;
  std::string auth = "none";
  std::string nonce;
};

struct TestAccepted {
  std::uint64_t test_id = 0;
  std::uint32_t server_threads = 1;
  std::vector<std::uint32_t> server_cpus;  // where its workers are pinned; empty = unpinned
  std::string server_version;
  // The server's CLOCK_REALTIME when the request arrived and as it wrote this, in ns since the
  // epoch (0: an older server): the client estimates the offset between the two clocks from them,
  // as NTP does, for one-way delays.
  std::uint64_t server_received_ns = 0;
  std::uint64_t server_clock_ns = 0;
};

// At most this many interval records are accepted in one message (a day at 1 s intervals).
inline constexpr std::size_t kMaxIntervals = 86400;

// The largest a side's figures (sender_done, transfers_done, results) can be for `streams` data
// connections carrying `intervals` interval records, both directions together: what the reader's
// frame cap allows, so the frames that grow with a test's connections fit at any count up to the
// caps. A bound from the widest value of every field, not an estimate.
std::uint64_t figures_frame_bound(std::uint32_t streams, std::uint64_t intervals) noexcept;

nlohmann::json to_json(const ServerHello& hello);
nlohmann::json to_json(const TestRequest& request);
nlohmann::json to_json(const TestAccepted& accepted);
nlohmann::json to_json(const SideResults& results, const char* type);
nlohmann::json to_json(const DirectedResults& results, const char* type);
nlohmann::json start_message();
// The client ends the window early (SIGINT) of a test in which the server sends.
nlohmann::json stop_message();
bool is_stop(const nlohmann::json& message) noexcept;
// The server holds the test in its queue: `ahead` tests must end before it starts.
nlohmann::json queued_message(std::uint32_t ahead);
// The tests ahead when `message` says the test is queued; nothing when it says something else.
std::optional<std::uint32_t> queued_ahead(const nlohmann::json& message);
// Each side says it is alive every second once the request is made (ControlChannel::keep_alive);
// read() passes over these.
nlohmann::json alive_message();
bool is_alive(const nlohmann::json& message) noexcept;
nlohmann::json error_message(const std::string& message, const std::string& code);
// error_message() as a whole frame, ready to write: what the server sends a connection it refuses
// at the door, which then needs neither json.hpp nor the framing.
std::string error_frame(const std::string& message, const std::string& code);

// Each parser checks the type field (turning an error frame into PeerError), the JSON types and
// every number against `limits`; anything wrong is a ProtocolError naming the field. A request's
// spec is read here; the rules it must keep are workloads::check()'s, which the server applies next.
ServerHello parse_server_hello(const nlohmann::json& message);
TestRequest parse_test_request(const nlohmann::json& message);
TestAccepted parse_test_accepted(const nlohmann::json& message, const spec::Limits& limits);
SideResults parse_side_results(const nlohmann::json& message, const char* type,
                               std::uint32_t expected_streams);
DirectedResults parse_directed_results(const nlohmann::json& message, const char* type,
                                       std::uint32_t forward_streams, std::uint32_t reverse_streams);
void parse_start(const nlohmann::json& message);
// For a frame that arrives where none was expected: PeerError for an error frame, else ProtocolError.
[[noreturn]] void fail_unexpected(const nlohmann::json& message, const std::string& during);

}  // namespace testio::control
