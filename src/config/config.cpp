#include "config/config.hpp"

#include <algorithm>
#include <thread>

namespace testio::config {

std::string_view to_string(RecvMode mode) noexcept {
  switch (mode) {
    case RecvMode::recv: return "recv";
    case RecvMode::recv_into: return "recv_into";
    case RecvMode::trunc: return "trunc";
    case RecvMode::splice: return "splice";
    case RecvMode::mmap: return "mmap";
  }
  return "recv_into";
}

std::optional<RecvMode> recv_mode_from_string(std::string_view text) noexcept {
  for (RecvMode mode : {RecvMode::recv, RecvMode::recv_into, RecvMode::trunc, RecvMode::splice, RecvMode::mmap})
    if (to_string(mode) == text) return mode;
  return std::nullopt;
}

std::string_view to_string(Engine engine) noexcept {
  switch (engine) {
    case Engine::asio: return "asio";
    case Engine::threads: return "threads";
    case Engine::uring: return "uring";
  }
  return "asio";
}

std::optional<Engine> engine_from_string(std::string_view text) noexcept {
  for (Engine engine : {Engine::asio, Engine::threads, Engine::uring})
    if (to_string(engine) == text) return engine;
  return std::nullopt;
}

std::string_view to_string(Direction direction) noexcept {
  switch (direction) {
    case Direction::forward: return "forward";
    case Direction::reverse: return "reverse";
    case Direction::bidir: return "bidir";
  }
  return "forward";
}

std::optional<Direction> direction_from_string(std::string_view text) noexcept {
  for (Direction direction : {Direction::forward, Direction::reverse, Direction::bidir})
    if (to_string(direction) == text) return direction;
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

std::string engine_refusal(Engine engine, RecvMode recv_mode, SendMode send_mode) {
  if (engine != Engine::asio && (recv_mode == RecvMode::splice || recv_mode == RecvMode::mmap))
    return "--engine " + std::string(to_string(engine)) + " does not do --recv-mode " +
           std::string(to_string(recv_mode)) + ": use recv, recv_into or trunc, or --engine asio";
  if (engine == Engine::uring && send_mode == SendMode::sendfile)
    return "--engine uring does not do --send-mode sendfile: use send or zerocopy, or --engine asio or threads";
  return {};
}

std::uint32_t effective_threads(std::uint32_t requested, std::uint32_t connections) noexcept {
  std::uint32_t threads = requested;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, std::min(threads, std::max(1u, connections)));
}

std::uint32_t worker_threads(Engine engine, std::uint32_t requested, std::uint32_t connections) noexcept {
  if (engine == Engine::threads) return std::max(1u, connections);
  return effective_threads(requested, connections);
}

}  // namespace testio::config
