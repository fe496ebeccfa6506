#include "lifecycle/connect.hpp"

#include <chrono>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/use_awaitable.hpp>

#include "lifecycle/deadline.hpp"
#include "net/mptcp.hpp"
#include "net/socket_options.hpp"

namespace testio::lifecycle {

using asio::ip::tcp;

// How long a connection may take to open when --connect-timeout does not say.
constexpr std::chrono::milliseconds kConnectLimit = std::chrono::seconds(10);

asio::awaitable<std::vector<tcp::endpoint>> resolve(const config::Config& config) {
  tcp::resolver resolver(co_await asio::this_coro::executor);
  std::string port = std::to_string(config.port);
  tcp::resolver::results_type results;
  try {
    switch (config.family) {
      case config::AddressFamily::v4:
        results = co_await resolver.async_resolve(tcp::v4(), config.host, port, asio::use_awaitable);
        break;
      case config::AddressFamily::v6:
        results = co_await resolver.async_resolve(tcp::v6(), config.host, port, asio::use_awaitable);
        break;
      case config::AddressFamily::any:
        results = co_await resolver.async_resolve(config.host, port, asio::use_awaitable);
        break;
    }
  } catch (const std::system_error& error) {
    throw std::runtime_error("cannot resolve host '" + config.host + "': " + error.code().message());
  }
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  if (endpoints.empty())
    throw std::runtime_error("host '" + config.host + "' has no address in the requested family");
  co_return endpoints;
}

namespace {

// `to`, carrying the IPv6 flow label `label` leased for `socket` (-L); `to` itself when 0.
tcp::endpoint labelled(tcp::socket& socket, tcp::endpoint to, std::uint32_t label) {
  if (!label) return to;
  if (!to.address().is_v6() || to.address().to_v6().is_v4_mapped())
    throw std::runtime_error("-L labels IPv6 packets: " + to.address().to_string() +
                             " is an IPv4 address (give an IPv6 one, or -6)");
  auto* target = reinterpret_cast<sockaddr_in6*>(to.data());
  target->sin6_flowinfo = net::lease_flow_label(socket.native_handle(), to.address().to_v6().to_bytes(), label);
  return to;
}

}  // namespace

asio::awaitable<tcp::socket> connect_any(const std::vector<tcp::endpoint>& endpoints,
                                         const config::Config& config,
                                         const DataConnectionOptions& data) {
  const std::uint16_t source_port = data.source_port;
  auto executor = co_await asio::this_coro::executor;
  std::string last_error = "no usable address";
  asio::ip::address source;
  if (!config.bind_address.empty()) {
    asio::error_code ec;
    source = asio::ip::make_address(config.bind_address, ec);
    if (ec) throw std::runtime_error("-B '" + config.bind_address + "' is not an IP address");
  }
  for (const tcp::endpoint& endpoint : endpoints) {
    if (!config.bind_address.empty() && source.is_v4() != endpoint.address().is_v4()) continue;
    tcp::socket socket(executor);
    try {
      if (data.mptcp)
        socket.assign(endpoint.protocol(), net::open_mptcp_socket(endpoint.protocol().family()));
      else
        socket.open(endpoint.protocol());
      if (!config.bind_device.empty()) net::bind_to_device(socket.native_handle(), config.bind_device);
      if (source_port || data.port_before_connect) {
        // A previous run's connection from this port may still be in TIME_WAIT.
        socket.set_option(asio::socket_base::reuse_address(true));
        const asio::ip::address from = config.bind_address.empty()
                                           ? (endpoint.address().is_v4() ? asio::ip::address(asio::ip::address_v4::any())
                                                                         : asio::ip::address(asio::ip::address_v6::any()))
                                           : source;
        try {
          socket.bind(tcp::endpoint(from, source_port));
        } catch (const std::system_error& error) {
          if (!source_port) throw;
          throw SourcePortBusy(std::string(config.cport_first ? "--cport" : "--spread even") +
                               ": cannot use source port " + std::to_string(source_port) + ": " +
                               error.code().message());
        }
      } else if (!config.bind_address.empty()) {
        socket.bind(tcp::endpoint(source, 0));
      }
      if (data.prepare) data.prepare(socket);
      if (config.snd_timeout_ms) net::set_user_timeout(socket.native_handle(), config.snd_timeout_ms);
      co_await within(socket.async_connect(labelled(socket, endpoint, data.flow_label), asio::use_awaitable),
                               config.connect_timeout_ms ? std::chrono::milliseconds(config.connect_timeout_ms)
                                                         : kConnectLimit,
                               "connecting");
      co_return socket;
    } catch (const std::system_error& error) {
      last_error = error.code().message();
    } catch (const TimeoutError& error) {
      last_error = error.what();
    }
  }
  throw std::runtime_error("cannot connect to " + config.host + " port " + std::to_string(config.port) +
                           ": " + last_error);
}

void tune_control_connection(tcp::socket& socket, const config::Config& config) {
  if (const auto& keepalive = config.control_keepalive)
    net::set_keepalive(socket.native_handle(), keepalive->idle_s, keepalive->interval_s, keepalive->count);
}

std::string address_text(const asio::ip::address& address) {
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; show them as the IPv4 they are.
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  return address.to_string();
}

std::string endpoint_text(const asio::ip::tcp::endpoint& endpoint) {
  const std::string address = address_text(endpoint.address());
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(endpoint.port());
}

}  // namespace testio::lifecycle
