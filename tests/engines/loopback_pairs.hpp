// Connected TCP pairs on 127.0.0.1 for tests that run streams in-process: each end can be moved
// onto the io_context of the worker that will own it. Waits are bounded; nothing leaves loopback.
#pragma once

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

namespace testio::testing {

using asio::ip::tcp;

// One connection: `near` is the connecting end, `far` the accepted one; both on `io`.
inline std::pair<tcp::socket, tcp::socket> loopback_pair(asio::io_context& io) {
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket near(io);
  near.connect(acceptor.local_endpoint());
  tcp::socket far = acceptor.accept();
  return {std::move(near), std::move(far)};
}

// `socket`, moved onto `context` (a worker's).
inline tcp::socket moved_to(asio::io_context& context, tcp::socket socket) {
  const tcp protocol = socket.local_endpoint().protocol();
  return tcp::socket(context, protocol, socket.release());
}

// Polls `done` every millisecond for at most `limit`; true when it came true.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace testio::testing
