// The control connection as a stream of frames, with a deadline on every wait. Owner: the thread
// running the control io_context (the main thread on both sides).
#pragma once

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "lifecycle/connect.hpp"
#include "lifecycle/deadline.hpp"
#include "net/asio_fwd.hpp"

namespace testio::lifecycle {
extern template net::Awaitable<nlohmann::json> within(net::Awaitable<nlohmann::json>,
                                                      std::chrono::steady_clock::duration, std::string);
}  // namespace testio::lifecycle

namespace testio::control {

// The deadline helpers are the lifecycle's (lifecycle/deadline.hpp); the control channel's reads
// wait for JSON frames, whose race is instantiated in channel.cpp.
using lifecycle::capture;
using lifecycle::Captured;
using lifecycle::StalledError;
using lifecycle::TimeoutError;
using lifecycle::within;

class ControlChannel {
 public:
  ControlChannel(net::TcpSocket socket, std::uint32_t max_frame);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // The next frame, past the peer's heartbeats. Throws ProtocolError for an oversized or
  // malformed frame, std::system_error for a closed or reset connection, TimeoutError when
  // `limit` passes first, StalledError when, after keep_alive(), nothing at all came for its
  // limit. Safe to cancel: bytes already received stay buffered for the next call.
  net::Awaitable<nlohmann::json> read(std::chrono::steady_clock::duration limit);
  // By value: the frame is built before the first suspension. (GCC 12 mishandles some temporaries
  // that live across a co_await, so callers pass named values, never braced temporaries.)
  net::Awaitable<void> write(nlohmann::json message);
  // From now on this side says it is alive every second (a frame the peer's read() passes over,
  // never inside another frame), and read() fails with StalledError ("the peer stopped for S s")
  // when nothing came for `stall` (zero: never). Both sides call it once the request is made.
  void keep_alive(std::chrono::steady_clock::duration stall);

  net::TcpSocket& socket() noexcept { return *socket_; }
  // Frames from now on may be this big (never less than the cap it was made with): the figures a
  // side sends grow with the test's connections.
  void allow_frames_up_to(std::uint64_t bytes) noexcept {
    max_frame_ = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(bytes, max_frame_, UINT32_MAX));
  }
  // "127.0.0.1:5201" or "[::1]:5201"; empty when the socket is closed.
  std::string peer() const;

 private:
  // The first whole frame of what has arrived, taken from it; nothing while it is incomplete.
  // Throws ProtocolError for an oversized or malformed one.
  std::optional<nlohmann::json> buffered_frame();
  // One heartbeat, unless a frame is being written; what the socket does not take at once goes
  // out first, with the next beat or frame.
  void beat();
  void schedule_beat();

  std::unique_ptr<net::TcpSocket> socket_;  // pointers keep Asio out of this header
  std::uint32_t max_frame_;
  std::string received_;
  std::chrono::steady_clock::duration stall_{};  // zero: no stall limit
  std::shared_ptr<int> writes_ = std::make_shared<int>(0);  // frames being written now
  std::string unsent_;  // the rest of a heartbeat the socket did not take whole
  std::unique_ptr<net::SteadyTimer> heartbeat_;
  std::shared_ptr<bool> alive_;  // the heartbeat's handler runs only while this channel exists
};

using lifecycle::address_text;
using lifecycle::endpoint_text;

}  // namespace testio::control
