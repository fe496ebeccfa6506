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

namespace {
constexpr auto kHeartbeat = std::chrono::seconds(1);

std::string whole_seconds(std::chrono::steady_clock::duration limit) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit + std::chrono::milliseconds(500)).count());
}
}  // namespace

ControlChannel::ControlChannel(asio::ip::tcp::socket socket, std::uint32_t max_frame)
    : socket_(std::move(socket)), max_frame_(max_frame), heartbeat_(socket_.get_executor()) {
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

ControlChannel::~ControlChannel() { alive_.reset(); }

asio::awaitable<nlohmann::json> ControlChannel::read(std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{});
    // Each frame, a heartbeat too, restarts the stall limit; the overall limit runs on.
    const bool stall_first = stall_.count() > 0 && stall_ < left;
    nlohmann::json message;
    try {
      message = co_await within(read_unbounded(), stall_first ? stall_ : left, "waiting");
    } catch (const TimeoutError&) {
      if (stall_first) throw StalledError("the peer stopped for " + whole_seconds(stall_) + " s");
      throw TimeoutError("waiting for the peer's control message timed out after " + whole_seconds(limit) + " s");
    }
    if (!is_alive(message)) co_return message;
  }
}

void ControlChannel::keep_alive(std::chrono::steady_clock::duration stall) {
  stall_ = stall;
  if (alive_) return;
  alive_ = std::make_shared<bool>(true);
  schedule_beat();
}

void ControlChannel::schedule_beat() {
  heartbeat_.expires_after(kHeartbeat);
  heartbeat_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const asio::error_code& error) {
    if (error || alive.expired()) return;  // the channel is gone or closing
    beat();
    if (socket_.is_open()) schedule_beat();
  });
}

void ControlChannel::beat() {
  if (writing_ || !unsent_.empty() || !socket_.is_open()) return;  // a frame on its way says as much
  const std::string frame = encode_frame(alive_message());
  asio::error_code error;
  socket_.non_blocking(true, error);
  const std::size_t sent = socket_.send(asio::buffer(frame), 0, error);
  if (error == asio::error::would_block) return;  // the peer reads nothing: nothing to add
  if (!error && sent < frame.size()) unsent_ = frame.substr(sent);
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
  std::string frame = std::move(unsent_) + encode_frame(message);
  unsent_.clear();
  writing_ = true;
  struct Done {
    bool& writing;
    ~Done() { writing = false; }
  } done{writing_};
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
