#include "config/config.hpp"

#include <algorithm>
#include <thread>

namespace testio::config {

std::string_view to_string(RecvMode mode) noexcept {
  switch (mode) {
    case RecvMode::recv: return "recv";
    case RecvMode::recv_into: return "recv_into";
    case RecvMode::trunc: return "trunc";
  }
  return "recv_into";
}

std::optional<RecvMode> recv_mode_from_string(std::string_view text) noexcept {
  for (RecvMode mode : {RecvMode::recv, RecvMode::recv_into, RecvMode::trunc})
    if (to_string(mode) == text) return mode;
  return std::nullopt;
}

std::string_view to_string(SendMode mode) noexcept {
  switch (mode) {
    case SendMode::send: return "send";
    case SendMode::zerocopy: return "zerocopy";
    case SendMode::sendfile: return "sendfile";
  }
  return "send";
}

std::optional<SendMode> send_mode_from_string(std::string_view text) noexcept {
  for (SendMode mode : {SendMode::send, SendMode::zerocopy, SendMode::sendfile})
    if (to_string(mode) == text) return mode;
  return std::nullopt;
}

std::uint32_t effective_threads(std::uint32_t requested, std::uint32_t connections) noexcept {
  std::uint32_t threads = requested;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, std::min(threads, std::max(1u, connections)));
}

}  // namespace testio::config
