// Asio's types by name only, for interfaces that hand them along without using them: a coroutine
// declared as returning an awaitable, a socket taken by value or by reference, the io_context a
// class is given. Naming them costs nothing; including <asio/awaitable.hpp> costs every includer
// about 72,000 preprocessed lines and <asio/ip/tcp.hpp> about 90,000 (tools/build_cost.py). A unit
// that makes, moves, awaits or reads one includes Asio itself.
//
// Asio's own headers give these templates their default arguments, so the aliases below spell
// every argument; a declaration here may not repeat a default (the compiler would see it twice).
#pragma once

#include <chrono>

namespace asio {
class any_io_executor;
class io_context;
template <typename T, typename Executor>
class awaitable;
template <typename Clock>
struct wait_traits;
template <typename Clock, typename WaitTraits, typename Executor>
class basic_waitable_timer;
template <typename Protocol, typename Executor>
class basic_stream_socket;
template <typename Protocol, typename Executor>
class basic_datagram_socket;
template <typename Protocol, typename Executor>
class basic_socket_acceptor;
namespace ip {
class address;
class tcp;
class udp;
template <typename InternetProtocol>
class basic_endpoint;
}  // namespace ip
}  // namespace asio

namespace testio::net {

// The same types as asio::awaitable<T>, asio::steady_timer, asio::ip::tcp::socket, asio::ip::udp::socket,
// asio::ip::tcp::acceptor, asio::ip::tcp::endpoint and asio::ip::udp::endpoint, so a .cpp file
// may define with Asio's spelling what a header declares with these.
template <typename T>
using Awaitable = asio::awaitable<T, asio::any_io_executor>;
using SteadyTimer = asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                                               asio::any_io_executor>;
using TcpSocket = asio::basic_stream_socket<asio::ip::tcp, asio::any_io_executor>;
using UdpSocket = asio::basic_datagram_socket<asio::ip::udp, asio::any_io_executor>;
using TcpAcceptor = asio::basic_socket_acceptor<asio::ip::tcp, asio::any_io_executor>;
using TcpEndpoint = asio::ip::basic_endpoint<asio::ip::tcp>;
using UdpEndpoint = asio::ip::basic_endpoint<asio::ip::udp>;

}  // namespace testio::net
