#include "control/channel.hpp"

#include <array>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <nlohmann/json.hpp>

#include "control/framing.hpp"
#include "control/protocol.hpp"

namespace testio::control {

template <typename T>
asio::awaitable<T> within(asio::awaitable<T> operation, std::chrono::steady_clock::duration limit,
                          std::string what) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor, limit);
  auto result = co_await (capture(std::move(operation)) || timer.async_wait(asio::use_awaitable));
  if (result.index() == 1)
    throw TimeoutError(what + " timed out after " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
                       " s");
  Captured<T>& captured = std::get<0>(result);
  if (captured.error) std::rethrow_exception(captured.error);
  if constexpr (!std::is_void_v<T>) co_return std::move(*captured.value);
}

template asio::awaitable<void> within(asio::awaitable<void>, std::chrono::steady_clock::duration, std::string);
template asio::awaitable<std::size_t> within(asio::awaitable<std::size_t>, std::chrono::steady_clock::duration,
                                             std::string);
template asio::awaitable<nlohmann::json> within(asio::awaitable<nlohmann::json>, std::chrono::steady_clock::duration,
                                                std::string);

ControlChannel::ControlChannel(asio::ip::tcp::socket socket, std::uint32_t max_frame)
    : socket_(std::move(socket)), max_frame_(max_frame) {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

asio::awaitable<nlohmann::json> ControlChannel::read(std::chrono::steady_clock::duration limit) {
  co_return co_await within(read_unbounded(), limit, "waiting for the peer's control message");
}

asio::awaitable<nlohmann::json> ControlChannel::read_unbounded() {
  std::array<char, 64 * 1024> chunk;  // the figures of thousands of connections arrive in MBs
  for (;;) {
    DecodedFrame frame = decode_frame(received_, max_frame_);
    switch (frame.status) {
      case DecodedFrame::Status::ok:
        received_.erase(0, frame.consumed);
        co_return std::move(frame.message);
      case DecodedFrame::Status::too_large:
      case DecodedFrame::Status::malformed:
        throw ProtocolError(frame.error);
      case DecodedFrame::Status::need_more:
        break;
    }
    std::size_t n = co_await socket_.async_read_some(asio::buffer(chunk), asio::use_awaitable);
    received_.append(chunk.data(), n);
  }
}

asio::awaitable<void> ControlChannel::write(nlohmann::json message) {
  std::string frame = encode_frame(message);
  co_await within(asio::async_write(socket_, asio::buffer(frame), asio::use_awaitable),
                  std::chrono::seconds(10), "sending a control message");
}

std::string ControlChannel::peer() const {
  asio::error_code ec;
  auto endpoint = socket_.remote_endpoint(ec);
  return ec ? std::string() : endpoint_text(endpoint);
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

}  // namespace testio::control
