// An iperf3 control connection: state bytes and length-prefixed JSON, every wait with a deadline.
// Owner: the control thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

#include "protocols/iperf3/wire.hpp"

namespace testio::iperf3 {

// The peer sent SERVER_ERROR: the sentence names its i_errno.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Control {
 public:
  explicit Control(asio::ip::tcp::socket socket);

  // The next state byte. SERVER_ERROR becomes a PeerError (its two numbers read); a closed
  // connection a std::system_error; the deadline a lifecycle::TimeoutError naming `what`.
  asio::awaitable<State> read_state(std::chrono::steady_clock::duration limit, std::string what);
  asio::awaitable<void> write_state(State state);
  // SERVER_ERROR with iperf3's error number, best effort: the peer may be gone.
  asio::awaitable<void> write_error(std::int32_t i_errno) noexcept;

  // uint32 BE length then the JSON; a length above `cap` is a ProtocolError before any body byte.
  asio::awaitable<std::string> read_json(std::chrono::steady_clock::duration limit, std::uint32_t cap,
                                         std::string what);
  asio::awaitable<void> write_json(std::string body);
  asio::awaitable<void> write_cookie(const Cookie& cookie);

  asio::ip::tcp::socket& socket() noexcept { return socket_; }

 private:
  asio::awaitable<void> read_exactly(void* data, std::size_t size, std::chrono::steady_clock::duration limit,
                                     const std::string& what);
  asio::awaitable<void> write_bytes(std::string bytes);

  asio::ip::tcp::socket socket_;
};

// The cookie that opens a data connection, with the same deadline as a control write.
asio::awaitable<void> send_cookie(asio::ip::tcp::socket& socket, const Cookie& cookie);

// Throws `expected` unless `got` is it, with a sentence naming both.
void expect_state(State got, State expected, const char* during);

}  // namespace testio::iperf3
