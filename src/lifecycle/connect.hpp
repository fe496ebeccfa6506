// Name resolution and outgoing connections with deadlines, shared by the client's control and
// data connections.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"
#include "config/config.hpp"
#include "lifecycle/exchange.hpp"
#include "stats/peer_clock.hpp"

namespace testio::lifecycle {

// The source port asked for is held by another socket.
struct SourcePortBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every address of `host` in the requested family. Throws std::runtime_error naming the host.
net::Awaitable<std::vector<net::TcpEndpoint>> resolve(const config::Config& config);

// Called on the opened, bound socket before connect: socket options that the SYN must carry
// (buffer sizes fix the window scale) go here.
using PrepareSocket = std::function<void(net::TcpSocket&)>;

// How a data connection opens; the control connection needs none of it.
struct DataConnectionOptions {
  PrepareSocket prepare;              // run on the opened, bound socket before connect
  std::uint16_t source_port = 0;      // --cport / --spread even; 0: the kernel's
  // With it (and no source port) the kernel picks the port at bind() rather than in connect():
  // measured on Linux 6.18, a connection whose port connect() picks does not always take the
  // multipath nexthop a lookup of its ports names (3 of 6 took the other), one bound first always does.
  bool port_before_connect = false;
  bool mptcp = false;                 // --mptcp: an MPTCP socket (net/mptcp.hpp)
  std::uint32_t flow_label = 0;       // -L: the IPv6 flow label its packets carry; 0 = the kernel's
};

// Connects to the first endpoint that answers, from `config.bind_address` if set. Throws
// std::runtime_error naming the peer.
net::Awaitable<net::TcpSocket> connect_any(const std::vector<net::TcpEndpoint>& endpoints,
                                           const config::Config& config,
                                           const DataConnectionOptions& data = {});

// --cntl-ka on a client's control connection (--snd-timeout is connect_any's, on every
// connection). Throws std::runtime_error with one sentence when the kernel refuses.
void tune_control_connection(net::TcpSocket& socket, const config::Config& config);

// "192.0.2.1:5201" or "[2001:db8::1]:5201".
std::string endpoint_text(const net::TcpEndpoint& endpoint);
// "192.0.2.1" or "2001:db8::1": an IPv4 peer of a dual-stack listener as the IPv4 it is.
std::string address_text(const asio::ip::address& address);

}  // namespace testio::lifecycle
