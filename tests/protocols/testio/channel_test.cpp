// The control connection's heartbeat: a silent but living peer is not stalled, a stopped one is,
// and heartbeats never reach the reader in place of a frame.
#include "protocols/testio/channel.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/use_future.hpp>
#include <nlohmann/json.hpp>

#include "protocols/testio/protocol.hpp"

namespace testio::control {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;

// Two connected sockets on 127.0.0.1.
std::pair<tcp::socket, tcp::socket> connected_pair(asio::io_context& io) {
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket near(io), far(io);
  near.connect(acceptor.local_endpoint());
  acceptor.accept(far);
  return {std::move(near), std::move(far)};
}

// What the read ended with: the frame's type, or the exception's class and sentence.
std::string outcome_of(asio::io_context& io, ControlChannel& reader, std::chrono::steady_clock::duration limit) {
  auto future = asio::co_spawn(io, reader.read(limit), asio::use_future);
  // The heartbeats keep the loop busy for ever: run it until the read is over.
  const auto deadline = std::chrono::steady_clock::now() + limit + 5s;
  while (future.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < deadline)
    io.run_one_for(100ms);
  try {
    return "frame " + future.get().value("type", std::string());
  } catch (const StalledError& error) {
    return std::string("stalled: ") + error.what();
  } catch (const TimeoutError&) {
    return "timed out";
  }
}

TEST(ControlChannel, APeerThatSaysNothingAtAllHasStopped) {
  asio::io_context io;
  auto [near, far] = connected_pair(io);
  ControlChannel reader(std::move(near), 64 * 1024);
  reader.keep_alive(2s);
  EXPECT_EQ(outcome_of(io, reader, 30s), "stalled: the peer stopped for 2 s");
}

TEST(ControlChannel, AQuietPeerThatBeatsIsNotStalledAndItsBeatsAreNoFrames) {
  asio::io_context io;
  auto [near, far] = connected_pair(io);
  ControlChannel reader(std::move(near), 64 * 1024);
  ControlChannel writer(std::move(far), 64 * 1024);
  reader.keep_alive(2s);
  writer.keep_alive(0s);  // beats, never gives up on its own peer
  EXPECT_EQ(outcome_of(io, reader, 4s), "timed out");  // beats came for twice the stall limit
  io.restart();
  asio::co_spawn(io, writer.write(start_message()), asio::detached);
  EXPECT_EQ(outcome_of(io, reader, 10s), "frame start");
}

}  // namespace
}  // namespace testio::control
