// iperf3's control protocol on the wire: the state byte, the cookie that opens every connection,
// and the error every malformed peer message becomes. Facts in docs/protocol.md ("iperf3").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace testio::iperf3 {

// One signed byte on the control connection.
enum class State : std::int8_t {
  test_start = 1,
  test_running = 2,
  test_end = 4,
  param_exchange = 9,
  create_streams = 10,
  server_terminate = 11,
  client_terminate = 12,
  exchange_results = 13,
  display_results = 14,
  iperf_done = 16,
  access_denied = -1,  // also what a busy server answers
  server_error = -2,   // followed by i_errno and errno, each an int32 big-endian
};

// "TEST_END (4)", or "unknown state 77" for a byte outside the list above.
std::string state_name(std::int8_t state);

// 36 characters and a NUL; it opens the control connection and each data connection of a test.
inline constexpr std::size_t kCookieBytes = 37;
using Cookie = std::array<char, kCookieBytes>;

// 36 random characters from iperf3's alphabet (a-z, 2-7) and the NUL.
Cookie make_cookie();
// Printable ASCII, then the NUL. The alphabet is not checked: old clients used other characters.
bool is_cookie(const unsigned char* bytes, std::size_t size) noexcept;
// Printable ASCII: could this be the start of a cookie? (testio's magic starts with 0x9e.)
bool may_start_cookie(const unsigned char* bytes, std::size_t size) noexcept;
Cookie cookie_from(const unsigned char* bytes) noexcept;

// Caps on what a peer may send: iperf3 3.18+ refuses parameter JSON beyond 8 KiB; results carry a
// few hundred bytes per stream.
inline constexpr std::uint32_t kMaxParamsJson = 8192;
inline constexpr std::uint32_t kMaxResultsJson = 1u << 20;
// A UDP stream's set-up: the client's datagram and the server's answer, 4 bytes each, written as
// native unsigned ints (so "9876" and "6789" on a little-endian host); older servers answered
// 987654321.
inline constexpr std::size_t kUdpConnectBytes = 4;
inline constexpr std::uint32_t kUdpConnectMessage = 0x36373839;
inline constexpr std::uint32_t kUdpConnectReply = 0x39383736;
inline constexpr std::uint32_t kLegacyUdpConnectReply = 987654321;

// iperf3's own limit on -P.
inline constexpr std::uint32_t kMaxStreams = 128;

// i_errno values (iperf_api.h) this side sends in SERVER_ERROR; the iperf3 client prints its own
// sentence for each.
inline constexpr std::int32_t kErrorNotImplemented = 13;  // IEUNIMP: UDP, SCTP, ...
inline constexpr std::int32_t kErrorTotalRate = 27;       // IETOTALRATE: above --server-bitrate-limit
inline constexpr std::int32_t kErrorReceiveParams = 114;  // IERECVPARAMS: malformed parameters
inline constexpr std::int32_t kErrorStreamAccept = 204;   // IESTREAMACCEPT: streams did not arrive
inline constexpr std::int32_t kErrorAuthorization = 142;  // IEAUTHTEST: a keyed testio server
// The sentence for an i_errno a server sent us, or "" when this side does not know the number.
std::string error_text(std::int32_t i_errno);

// Anything a peer sent that breaks the protocol or a cap; one sentence fit to show the user.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// uint32 big-endian, as iperf3 frames its JSON and its error numbers.
std::array<unsigned char, 4> encode_u32(std::uint32_t value) noexcept;
std::uint32_t decode_u32(const unsigned char* bytes) noexcept;

}  // namespace testio::iperf3
