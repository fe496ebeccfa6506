// Clients that do not speak testio's protocol, served by the one server (server/server.cpp):
// iperf3 clients, which share testio's port and are told apart by their first bytes (src/protocols/iperf3/),
// or plain senders, every connection of a --raw sink (raw_clients.cpp). Tests of every kind share
// the server's slots, so "busy" means the same whoever asks; the acceptor, --allow, the door's
// caps, signals and -1 are the server's, whoever the peer.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "net/asio_fwd.hpp"
#include "metrics/server_metrics.hpp"
#include "lifecycle/slots.hpp"

namespace testio::lifecycle {

class ForeignClients {
 public:
  virtual ~ForeignClients() = default;
  // Every connection is this peer's, unread (a plain sender's bytes are all data, so nothing is
  // sniffed and testio's own clients are not served); each is a whole test (-1 takes one).
  // Otherwise only connections that do not begin with testio's magic are.
  virtual bool takes_every_connection() const noexcept { return false; }
  // How its tests count in the server's metrics.
  virtual metrics::Protocol protocol() const noexcept = 0;
  // The server's line once it listens on `endpoint`.
  virtual std::string listening(const std::string& endpoint) const { return "listening on " + endpoint; }
  // The server stops (a signal, -1): what it holds is reported now.
  virtual void stop() {}
  // A connection whose first four bytes (`first`, already read) are not testio's magic, or, when
  // it takes every connection, any connection with nothing read (`first` zero). Finishes reading
  // what identifies it within `handshake_limit`. Returns whether a test ran and succeeded
  // (nullopt: no test ran, e.g. a data connection, a refusal or a stranger). Never throws.
  virtual net::Awaitable<std::optional<bool>> serve(net::TcpSocket socket,
                                                    std::array<unsigned char, 4> first, TestSlots& slots,
                                                    std::chrono::steady_clock::duration handshake_limit) = 0;
  // A datagram on the server's UDP `port` that is no testio flow's hello (an iperf3 client's UDP
  // stream saying it is there). True when taken.
  virtual bool take_datagram(const unsigned char* data, std::size_t size, const net::UdpEndpoint& from,
                             std::uint16_t port) {
    (void)data, (void)size, (void)from, (void)port;
    return false;
  }
  // What the running tests have received and sent so far, as --metrics reads a testio test's
  // (ServerTest::bytes_so_far): zeros for a test once it is reported, as its report holds them.
  virtual std::pair<std::uint64_t, std::uint64_t> bytes_so_far() const noexcept { return {0, 0}; }
};

}  // namespace testio::lifecycle
