// The listening socket both servers (testio's protocol and --raw) open from -p, -B, -4 and -6.
#pragma once

#include "net/asio_fwd.hpp"
#include "config/config.hpp"

namespace testio::server {

// Dual-stack unless -4/-6/-B say otherwise; falls back to IPv4 on a host without IPv6. Throws
// std::runtime_error naming the address when it cannot listen.
net::TcpAcceptor open_acceptor(asio::io_context& io, const config::Config& config);

}  // namespace testio::server
