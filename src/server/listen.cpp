#include "server/listen.hpp"

#include <asio/ip/v6_only.hpp>

#include "protocols/testio/channel.hpp"
#include "net/mptcp.hpp"
#include "net/socket_options.hpp"

namespace testio::server {
namespace {

using asio::ip::tcp;

tcp::endpoint listen_endpoint(const config::Config& config) {
  if (!config.bind_address.empty()) {
    asio::error_code ec;
    asio::ip::address address = asio::ip::make_address(config.bind_address, ec);
    if (ec) throw std::runtime_error("-B '" + config.bind_address + "' is not an IP address");
    return {address, config.port};
  }
  return {config.family == config::AddressFamily::v4 ? tcp::v4() : tcp::v6(), config.port};
}

// A plain TCP listener, or with --mptcp an MPTCP one: it still accepts plain TCP clients, whose
// connections the kernel hands over as plain TCP sockets.
void open_listener(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, const config::Config& config) {
  if (config.mptcp)
    acceptor.assign(endpoint.protocol(), net::open_mptcp_socket(endpoint.protocol().family()));
  else
    acceptor.open(endpoint.protocol());
}

}  // namespace

tcp::acceptor open_acceptor(asio::io_context& io, const config::Config& config) {
  tcp::endpoint endpoint = listen_endpoint(config);
  tcp::acceptor acceptor(io);
  try {
    open_listener(acceptor, endpoint, config);
  } catch (const std::exception&) {
    if (!config.bind_address.empty() || config.family != config::AddressFamily::any) throw;
    endpoint = tcp::endpoint(tcp::v4(), config.port);  // a host without IPv6
    open_listener(acceptor, endpoint, config);
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  if (!config.bind_device.empty()) net::bind_to_device(acceptor.native_handle(), config.bind_device);
  // --snd-timeout: every accepted connection, control and data, inherits the listener's.
  if (config.snd_timeout_ms) net::set_user_timeout(acceptor.native_handle(), config.snd_timeout_ms);
  // Dual-stack unless -6 asked for IPv6 only.
  if (endpoint.protocol() == tcp::v6() && config.bind_address.empty())
    acceptor.set_option(asio::ip::v6_only(config.family == config::AddressFamily::v6));
  try {
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::system_error& error) {
    throw std::runtime_error("cannot listen on " + control::endpoint_text(endpoint) + ": " +
                             error.code().message());
  }
  return acceptor;
}

}  // namespace testio::server
