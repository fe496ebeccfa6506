// Asio's socket and endpoint types by name only, for interfaces that hand them along without
// using them (a workload's streams take their sockets through workloads/workload.hpp). Naming them
// costs nothing; including <asio/ip/tcp.hpp> costs every includer about 85,000 preprocessed lines
// (tools/build_cost.py). A unit that makes, moves or reads one includes Asio itself.
#pragma once

namespace asio {
class any_io_executor;
template <typename Protocol, typename Executor>
class basic_stream_socket;
template <typename Protocol, typename Executor>
class basic_datagram_socket;
namespace ip {
class address;
class tcp;
class udp;
template <typename InternetProtocol>
class basic_endpoint;
}  // namespace ip
}  // namespace asio

namespace testio::net {

// The same types as asio::ip::tcp::socket, asio::ip::udp::socket and asio::ip::tcp::endpoint.
using TcpSocket = asio::basic_stream_socket<asio::ip::tcp, asio::any_io_executor>;
using UdpSocket = asio::basic_datagram_socket<asio::ip::udp, asio::any_io_executor>;
using TcpEndpoint = asio::ip::basic_endpoint<asio::ip::tcp>;

}  // namespace testio::net
