#include <algorithm>
#include <thread>

#include "spec/test_spec.hpp"

namespace testio::spec {
namespace {

// One name per value; the first value is what an unknown number prints as.
template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::pair<Enum, std::string_view> (&names)[N]) noexcept {
  for (const auto& [candidate, name] : names)
    if (candidate == value) return name;
  return names[0].second;
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(std::string_view text, const std::pair<Enum, std::string_view> (&names)[N]) noexcept {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

constexpr std::pair<RecvMode, std::string_view> kRecvModes[] = {
    {RecvMode::recv_into, "recv_into"}, {RecvMode::recv, "recv"}, {RecvMode::trunc, "trunc"},
    {RecvMode::splice, "splice"},       {RecvMode::mmap, "mmap"}};
constexpr std::pair<SendMode, std::string_view> kSendModes[] = {
    {SendMode::send, "send"}, {SendMode::zerocopy, "zerocopy"}, {SendMode::sendfile, "sendfile"}};
constexpr std::pair<Engine, std::string_view> kEngines[] = {
    {Engine::asio, "asio"}, {Engine::threads, "threads"}, {Engine::uring, "uring"}};
constexpr std::pair<Direction, std::string_view> kDirections[] = {
    {Direction::forward, "forward"}, {Direction::reverse, "reverse"}, {Direction::bidir, "bidir"}};

}  // namespace

std::string_view to_string(RecvMode mode) noexcept { return name_of(mode, kRecvModes); }
std::string_view to_string(SendMode mode) noexcept { return name_of(mode, kSendModes); }
std::string_view to_string(Engine engine) noexcept { return name_of(engine, kEngines); }
std::string_view to_string(Direction direction) noexcept { return name_of(direction, kDirections); }
std::optional<RecvMode> recv_mode_from_string(std::string_view text) noexcept { return value_of(text, kRecvModes); }
std::optional<SendMode> send_mode_from_string(std::string_view text) noexcept { return value_of(text, kSendModes); }
std::optional<Engine> engine_from_string(std::string_view text) noexcept { return value_of(text, kEngines); }
std::optional<Direction> direction_from_string(std::string_view text) noexcept {
  return value_of(text, kDirections);
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

}  // namespace testio::spec
