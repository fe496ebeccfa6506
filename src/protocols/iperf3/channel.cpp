#include "protocols/iperf3/channel.hpp"

#include <array>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include "lifecycle/deadline.hpp"

namespace testio::iperf3 {

using namespace std::chrono_literals;

Control::Control(asio::ip::tcp::socket socket) : socket_(std::make_unique<asio::ip::tcp::socket>(std::move(socket))) {
  asio::error_code ignored;
  socket_->set_option(asio::ip::tcp::no_delay(true), ignored);
}

Control::~Control() = default;
Control::Control(Control&&) noexcept = default;
Control& Control::operator=(Control&&) noexcept = default;

asio::awaitable<void> Control::read_exactly(void* data, std::size_t size, std::chrono::steady_clock::duration limit,
                                            const std::string& what) {
  co_await lifecycle::within(asio::async_read(*socket_, asio::buffer(data, size), asio::use_awaitable), limit, what);
}

asio::awaitable<State> Control::read_state(std::chrono::steady_clock::duration limit, std::string what) {
  std::int8_t state = 0;
  co_await read_exactly(&state, 1, limit, what);
  if (state != static_cast<std::int8_t>(State::server_error)) co_return static_cast<State>(state);
  std::array<unsigned char, 8> numbers{};
  co_await read_exactly(numbers.data(), numbers.size(), 5s, "reading the iperf3 error numbers");
  auto i_errno = static_cast<std::int32_t>(decode_u32(numbers.data()));
  auto error_number = static_cast<std::int32_t>(decode_u32(numbers.data() + 4));
  std::string sentence = "the iperf3 peer reported error " + std::to_string(i_errno);
  std::string known = error_text(i_errno);
  if (!known.empty()) sentence += " (" + known + ")";
  if (error_number) sentence += ": " + std::error_code(error_number, std::generic_category()).message();
  throw PeerError(sentence);
}

asio::awaitable<void> Control::write_bytes(std::string bytes) {
  co_await lifecycle::within(asio::async_write(*socket_, asio::buffer(bytes), asio::use_awaitable), 10s,
                           "writing to the iperf3 control connection");
}

asio::awaitable<void> Control::write_state(State state) {
  std::string byte(1, static_cast<char>(state));
  co_await write_bytes(std::move(byte));
}

asio::awaitable<void> Control::write_error(std::int32_t i_errno) noexcept {
  std::string bytes(1, static_cast<char>(State::server_error));
  auto number = encode_u32(static_cast<std::uint32_t>(i_errno));
  bytes.append(reinterpret_cast<const char*>(number.data()), number.size());
  bytes.append(4, '\0');
  try {
    co_await write_bytes(std::move(bytes));
  } catch (const std::exception&) {
  }
}

asio::awaitable<std::string> Control::read_json(std::chrono::steady_clock::duration limit, std::uint32_t cap,
                                                std::string what) {
  std::array<unsigned char, 4> length{};
  co_await read_exactly(length.data(), length.size(), limit, what);
  std::uint32_t size = decode_u32(length.data());
  if (size > cap)
    throw ProtocolError("the peer announced " + std::to_string(size) + " bytes of JSON, more than the " +
                        std::to_string(cap) + " allowed");
  std::string body(size, '\0');
  co_await read_exactly(body.data(), size, limit, what);
  co_return body;
}

asio::awaitable<void> Control::write_json(std::string body) {
  auto length = encode_u32(static_cast<std::uint32_t>(body.size()));
  std::string bytes(reinterpret_cast<const char*>(length.data()), length.size());
  bytes += body;
  co_await write_bytes(std::move(bytes));
}

asio::awaitable<void> Control::write_cookie(const Cookie& cookie) {
  co_await send_cookie(*socket_, cookie);
}

asio::awaitable<void> send_cookie(asio::ip::tcp::socket& socket, const Cookie& cookie) {
  co_await lifecycle::within(asio::async_write(socket, asio::buffer(cookie), asio::use_awaitable), 10s,
                           "sending the iperf3 cookie");
}

void expect_state(State got, State expected, const char* during) {
  if (got == expected) return;
  if (got == State::access_denied)
    throw PeerError(std::string("the iperf3 peer denied access ") + during);
  throw ProtocolError(std::string("expected ") + state_name(static_cast<std::int8_t>(expected)) + " " + during +
                      ", got " + state_name(static_cast<std::int8_t>(got)));
}

}  // namespace testio::iperf3
