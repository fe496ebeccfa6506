// One iperf3 client's test on this server while it runs: what the door (server_door.cpp) gathers
// for it by cookie and the steps (server_session.cpp) run. Owner: the server's control thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>

#include "engines/completion_latch.hpp"
#include "iperf3/wire.hpp"

namespace testio::iperf3 {

class DataStreams;

// One iperf3 test while it runs: the streams its client opens, gathered by cookie.
struct ServedTest {
  Cookie cookie{};
  std::string peer;
  asio::ip::address peer_address, local_address;  // the control connection's ends
  bool gathering = false;     // between CREATE_STREAMS and the last stream
  bool reported = false;      // the reporter has been given the start
  bool udp = false;
  std::uint32_t expected = 0;
  std::vector<asio::ip::tcp::socket> sockets;
  std::vector<asio::ip::udp::socket> udp_sockets;  // -u: each stream's, connected to the client
  std::optional<asio::any_io_executor> executor;    // where the UDP sockets are made
  std::shared_ptr<engines::CompletionLatch> all_arrived;
  const DataStreams* streams = nullptr;  // while they run and are not yet reported (--metrics)
  std::uint32_t arrived() const noexcept {
    return static_cast<std::uint32_t>(udp ? udp_sockets.size() : sockets.size());
  }
};

}  // namespace testio::iperf3
