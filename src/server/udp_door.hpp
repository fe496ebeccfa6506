// The server's UDP port, the same number as its TCP one: where each UDP flow's hello arrives. A
// hello that names a running test gets its flow a socket of its own (ServerTest::attach_flow),
// which the kernel then hands that flow's datagrams; anything else is a stray, counted and
// dropped. Owner: the server's control thread (the main io_context).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "net/access_list.hpp"
#include "net/asio_fwd.hpp"
#include "lifecycle/foreign_clients.hpp"
#include "lifecycle/log_limiter.hpp"

namespace testio::lifecycle {
class ServerTest;
}  // namespace testio::lifecycle

namespace testio::server {

using lifecycle::ForeignClients;
using lifecycle::LogLimiter;
using lifecycle::ServerTest;


// The UDP port beside `listening` (the TCP acceptor's endpoint), the same number, address and
// device; throws std::system_error when it cannot be bound (another program's socket holds it).
std::unique_ptr<net::UdpSocket> open_udp_twin(asio::io_context& io, const net::TcpEndpoint& listening,
                                              const config::Config& config);

class UdpDoor {
 public:
  using FindTest = std::function<ServerTest*(std::uint64_t id)>;
  // Reads the hellos on `socket` (from open_udp_twin); a null socket leaves the server without
  // UDP, and its tests that need the port are refused. A datagram that is no hello goes to
  // `foreign` (iperf3's UDP streams), which may be null.
  UdpDoor(std::unique_ptr<net::UdpSocket> socket, const net::AccessList& allowed, FindTest find,
          ForeignClients* foreign, LogLimiter& log);
  ~UdpDoor();
  UdpDoor(const UdpDoor&) = delete;
  UdpDoor& operator=(const UdpDoor&) = delete;

  bool open() const noexcept;
  // The port number while open, else 0.
  std::uint16_t port() const noexcept;
  // Reads hellos until close().
  net::Awaitable<void> serve();
  void close() noexcept;
  std::uint64_t strays() const noexcept { return strays_; }

 private:
  void take(const unsigned char* data, std::size_t size, const net::UdpEndpoint& from);
  void stray(const net::UdpEndpoint& from, const std::string& why);

  std::unique_ptr<net::UdpSocket> socket_;  // a pointer keeps Asio out of this header
  std::uint16_t port_ = 0;
  const net::AccessList& allowed_;
  FindTest find_;
  ForeignClients* foreign_;
  LogLimiter& log_;
  std::uint64_t strays_ = 0;
};

}  // namespace testio::server
