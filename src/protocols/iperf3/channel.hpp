// An iperf3 control connection: state bytes and length-prefixed JSON, every wait with a deadline.
// Owner: the control thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>


#include "net/asio_fwd.hpp"
#include "protocols/iperf3/wire.hpp"

namespace testio::iperf3 {

// The peer sent SERVER_ERROR: the sentence names its i_errno.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Control {
 public:
  explicit Control(net::TcpSocket socket);
  ~Control();
  Control(Control&&) noexcept;
  Control& operator=(Control&&) noexcept;

  // The next state byte. SERVER_ERROR becomes a PeerError (its two numbers read); a closed
  // connection a std::system_error; the deadline a lifecycle::TimeoutError naming `what`.
  net::Awaitable<State> read_state(std::chrono::steady_clock::duration limit, std::string what);
  net::Awaitable<void> write_state(State state);
  // SERVER_ERROR with iperf3's error number, best effort: the peer may be gone.
  net::Awaitable<void> write_error(std::int32_t i_errno) noexcept;

  // uint32 BE length then the JSON; a length above `cap` is a ProtocolError before any body byte.
  net::Awaitable<std::string> read_json(std::chrono::steady_clock::duration limit, std::uint32_t cap,
                                        std::string what);
  net::Awaitable<void> write_json(std::string body);
  net::Awaitable<void> write_cookie(const Cookie& cookie);

  net::TcpSocket& socket() noexcept { return *socket_; }

 private:
  net::Awaitable<void> read_exactly(void* data, std::size_t size, std::chrono::steady_clock::duration limit,
                                    const std::string& what);
  net::Awaitable<void> write_bytes(std::string bytes);

  std::unique_ptr<net::TcpSocket> socket_;  // a pointer keeps Asio out of this header
};

// The cookie that opens a data connection, with the same deadline as a control write.
net::Awaitable<void> send_cookie(net::TcpSocket& socket, const Cookie& cookie);

// Throws `expected` unless `got` is it, with a sentence naming both.
void expect_state(State got, State expected, const char* during);

}  // namespace testio::iperf3
