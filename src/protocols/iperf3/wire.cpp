#include "protocols/iperf3/wire.hpp"

#include <random>

namespace testio::iperf3 {

std::string state_name(std::int8_t state) {
  switch (static_cast<State>(state)) {
    case State::test_start: return "TEST_START (1)";
    case State::test_running: return "TEST_RUNNING (2)";
    case State::test_end: return "TEST_END (4)";
    case State::param_exchange: return "PARAM_EXCHANGE (9)";
    case State::create_streams: return "CREATE_STREAMS (10)";
    case State::server_terminate: return "SERVER_TERMINATE (11)";
    case State::client_terminate: return "CLIENT_TERMINATE (12)";
    case State::exchange_results: return "EXCHANGE_RESULTS (13)";
    case State::display_results: return "DISPLAY_RESULTS (14)";
    case State::iperf_done: return "IPERF_DONE (16)";
    case State::access_denied: return "ACCESS_DENIED (-1)";
    case State::server_error: return "SERVER_ERROR (-2)";
  }
  return "unknown state " + std::to_string(state);
}

Cookie make_cookie() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::random_device seed;
  std::mt19937 generator(seed());
  std::uniform_int_distribution<std::size_t> pick(0, sizeof(kAlphabet) - 2);
  Cookie cookie{};
  for (std::size_t i = 0; i + 1 < kCookieBytes; ++i) cookie[i] = kAlphabet[pick(generator)];
  cookie[kCookieBytes - 1] = '\0';
  return cookie;
}

bool may_start_cookie(const unsigned char* bytes, std::size_t size) noexcept {
  for (std::size_t i = 0; i < size; ++i)
    if (bytes[i] < 0x20 || bytes[i] > 0x7e) return false;
  return true;
}

bool is_cookie(const unsigned char* bytes, std::size_t size) noexcept {
  return size == kCookieBytes && bytes[kCookieBytes - 1] == 0 && may_start_cookie(bytes, kCookieBytes - 1);
}

Cookie cookie_from(const unsigned char* bytes) noexcept {
  Cookie cookie{};
  for (std::size_t i = 0; i < kCookieBytes; ++i) cookie[i] = static_cast<char>(bytes[i]);
  return cookie;
}

std::string error_text(std::int32_t i_errno) {
  switch (i_errno) {
    case 13: return "not implemented";
    case 27: return "total required bandwidth is larger than server limit";
    case 114: return "unable to receive parameters from client";
    case 121: return "the server is busy running a test";
    case 124: return "unable to set socket buffer size";
    case 130: return "unable to set socket window size";
    case 134: return "unable to set TCP_CONGESTION";
    case 142: return "test authorization failed";
    case 204: return "unable to accept stream connection";
    default: return "";
  }
}

std::array<unsigned char, 4> encode_u32(std::uint32_t value) noexcept {
  return {static_cast<unsigned char>(value >> 24), static_cast<unsigned char>(value >> 16),
          static_cast<unsigned char>(value >> 8), static_cast<unsigned char>(value)};
}

std::uint32_t decode_u32(const unsigned char* bytes) noexcept {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
         std::uint32_t{bytes[3]};
}

}  // namespace testio::iperf3
