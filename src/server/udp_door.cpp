#include "server/udp_door.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>

#include "protocols/testio/channel.hpp"
#include "net/socket_options.hpp"
#include "lifecycle/server_lifecycle.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::server {

using asio::ip::udp;

std::unique_ptr<udp::socket> open_udp_twin(asio::io_context& io, const asio::ip::tcp::endpoint& listening,
                                           const config::Config& config) {
  const udp::endpoint endpoint(listening.address(), listening.port());
  auto socket = std::make_unique<udp::socket>(io);
  socket->open(endpoint.protocol());
  // Every flow's own socket is bound to this port too.
  socket->set_option(asio::socket_base::reuse_address(true));
  if (!config.bind_device.empty()) net::bind_to_device(socket->native_handle(), config.bind_device);
  if (endpoint.protocol() == udp::v6() && endpoint.address().is_unspecified())
    socket->set_option(asio::ip::v6_only(config.family == config::AddressFamily::v6));
  socket->bind(endpoint);
  return socket;
}

UdpDoor::UdpDoor(std::unique_ptr<udp::socket> socket, const net::AccessList& allowed, FindTest find,
                 ForeignClients* foreign, LogLimiter& log)
    : socket_(std::move(socket)), allowed_(allowed), find_(std::move(find)), foreign_(foreign), log_(log) {
  if (socket_) port_ = socket_->local_endpoint().port();
}

UdpDoor::~UdpDoor() = default;

bool UdpDoor::open() const noexcept { return socket_ && socket_->is_open(); }

std::uint16_t UdpDoor::port() const noexcept { return open() ? port_ : 0; }

asio::awaitable<void> UdpDoor::serve() {
  // A hello is 24 bytes; the room beyond lets a stray's size be told.
  unsigned char datagram[2048];
  while (open()) {
    udp::endpoint from;
    asio::error_code error;
    const std::size_t size = co_await socket_->async_receive_from(asio::buffer(datagram), from,
                                                                  asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !socket_->is_open()) co_return;
    if (error) continue;  // an ICMP error for an answer sent earlier: nothing to read
    take(datagram, size, from);
  }
}

void UdpDoor::take(const unsigned char* data, std::size_t size, const udp::endpoint& from) {
  if (!allowed_.allows(from.address())) return stray(from, "not in --allow");
  std::optional<workloads::udp::FlowHello> hello = workloads::udp::read_hello(data, size, false);
  if (!hello) {
    if (foreign_ && foreign_->take_datagram(data, size, from, port_)) return;
    return stray(from, "not a flow's hello");
  }
  ServerTest* test = find_(hello->test_id);
  if (!test) return stray(from, "names no running test");
  std::string refusal = test->attach_flow(hello->stream, from, port_);
  if (!refusal.empty()) stray(from, refusal);
}

void UdpDoor::stray(const udp::endpoint& from, const std::string& why) {
  ++strays_;
  log_.warn("udp stray", "ignored a datagram on UDP port " + std::to_string(port_) + " from " +
                             control::endpoint_text(asio::ip::tcp::endpoint(from.address(), from.port())) + ": " + why);
}

void UdpDoor::close() noexcept {
  asio::error_code ignored;
  if (socket_) socket_->close(ignored);
}

}  // namespace testio::server
