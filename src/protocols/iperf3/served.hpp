// One iperf3 client's test on this server while it runs: what the door (server.cpp) needs
// to hand its streams, found by cookie, to the test's ServerTest. Owner: the server's control thread.
#pragma once

#include <cstdint>
#include <string>

#include <asio/any_io_executor.hpp>
#include <asio/ip/address.hpp>

#include "protocols/iperf3/wire.hpp"
#include "lifecycle/server_lifecycle.hpp"

namespace testio::iperf3 {

struct ServedTest {
  Cookie cookie{};
  std::string peer;
  asio::ip::address peer_address, local_address;  // the control connection's ends
  asio::any_io_executor executor;                 // the control thread's: where UDP streams' sockets are made
  bool udp = false;
  std::uint32_t expected = 0;                     // its data connections (or UDP streams)
  std::uint32_t arrived = 0;                      // ... so far, numbered in the order they came
  lifecycle::ServerTest* test = nullptr;            // from the parameters on, while it runs
  bool started = false;                           // the reporter was given its start

  // Whether a stream arriving now is one of its own.
  bool takes_streams() const noexcept { return test && test->gathering() && arrived < expected; }
};

}  // namespace testio::iperf3
