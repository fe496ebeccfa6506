#include "protocols/testio/channel.hpp"

#include <array>
#include <optional>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <nlohmann/json.hpp>

#include "lifecycle/deadline_race.hpp"
#include "protocols/testio/framing.hpp"
#include "protocols/testio/protocol.hpp"

namespace testio::lifecycle {
template asio::awaitable<nlohmann::json> within(asio::awaitable<nlohmann::json>, std::chrono::steady_clock::duration,
                                                std::string);
}  // namespace testio::lifecycle

namespace testio::control {

namespace {
constexpr auto kHeartbeat = std::chrono::seconds(1);

std::string whole_seconds(std::chrono::steady_clock::duration limit) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit + std::chrono::milliseconds(500)).count());
}
}  // namespace

ControlChannel::ControlChannel(asio::ip::tcp::socket socket, std::uint32_t max_frame)
    : socket_(std::make_unique<asio::ip::tcp::socket>(std::move(socket))), max_frame_(max_frame),
      heartbeat_(std::make_unique<asio::steady_timer>(socket_->get_executor())) {
  asio::error_code ignored;
  socket_->set_option(asio::ip::tcp::no_delay(true), ignored);
}

ControlChannel::~ControlChannel() { alive_.reset(); }

asio::awaitable<nlohmann::json> ControlChannel::read(std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::array<char, 64 * 1024> chunk;  // the figures of thousands of connections arrive in MBs
  for (;;) {
    if (std::optional<nlohmann::json> message = buffered_frame()) {
      if (is_alive(*message)) continue;
      co_return std::move(*message);
    }
    const auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{});
    // Any bytes restart the stall limit (a big frame arriving slowly is a living peer); the
    // overall limit runs on.
    const bool stall_first = stall_.count() > 0 && stall_ < left;
    std::size_t n = 0;
    try {
      n = co_await within(socket_->async_read_some(asio::buffer(chunk), asio::use_awaitable),
                          stall_first ? stall_ : left, "waiting");
    } catch (const TimeoutError&) {
      if (stall_first) throw StalledError("the peer stopped for " + whole_seconds(stall_) + " s");
      throw TimeoutError("waiting for the peer's control message timed out after " + whole_seconds(limit) + " s");
    }
    received_.append(chunk.data(), n);
  }
}

std::optional<nlohmann::json> ControlChannel::buffered_frame() {
  nlohmann::json message;
  DecodedFrame frame = decode_frame(received_, max_frame_, message);
  switch (frame.status) {
    case DecodedFrame::Status::ok:
      received_.erase(0, frame.consumed);
      return message;
    case DecodedFrame::Status::too_large:
    case DecodedFrame::Status::malformed:
      throw ProtocolError(frame.error);
    case DecodedFrame::Status::need_more:
      break;
  }
  return std::nullopt;
}

void ControlChannel::keep_alive(std::chrono::steady_clock::duration stall) {
  stall_ = stall;
  if (alive_) return;
  alive_ = std::make_shared<bool>(true);
  asio::error_code ignored;
  socket_->non_blocking(true, ignored);  // a beat never waits; the async operations do not care
  schedule_beat();
}

void ControlChannel::schedule_beat() {
  heartbeat_->expires_after(kHeartbeat);
  heartbeat_->async_wait([this, alive = std::weak_ptr<bool>(alive_)](const asio::error_code& error) {
    if (error || alive.expired()) return;  // the channel is gone or closing
    beat();
    if (socket_->is_open()) schedule_beat();
  });
}

void ControlChannel::beat() {
  if (*writes_ > 0 || !socket_->is_open()) return;  // a frame on its way says as much
  // The rest of a beat the socket did not take whole goes first, never a new one beside it.
  const std::string frame = unsent_.empty() ? encode_frame(alive_message()) : std::move(unsent_);
  unsent_.clear();
  asio::error_code error;
  const std::size_t sent = socket_->send(asio::buffer(frame), 0, error);
  if (error == asio::error::would_block) unsent_ = frame;  // the peer reads nothing: try again
  else if (!error && sent < frame.size()) unsent_ = frame.substr(sent);
}

asio::awaitable<void> ControlChannel::write(nlohmann::json message) {
  std::string frame = std::move(unsent_) + encode_frame(message);
  unsent_.clear();
  // Counted in an object of its own: a detached write (the client's stop) may outlive the channel.
  struct Writing {
    std::shared_ptr<int> writes;
    explicit Writing(std::shared_ptr<int> count) : writes(std::move(count)) { ++*writes; }
    ~Writing() { --*writes; }
  } writing{writes_};
  co_await within(asio::async_write(*socket_, asio::buffer(frame), asio::use_awaitable),
                  std::chrono::seconds(10), "sending a control message");
}

std::string ControlChannel::peer() const {
  asio::error_code ec;
  auto endpoint = socket_->remote_endpoint(ec);
  return ec ? std::string() : endpoint_text(endpoint);
}

}  // namespace testio::control
