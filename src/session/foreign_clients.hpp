// Clients that do not speak testio's protocol but share its port (iperf3 clients, src/iperf3/).
// The server hands such a connection over after sniffing its first bytes; tests of either kind
// share the server's slots, so "busy" means the same whoever asks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>

namespace testio::session {

// Tests running or being set up, against --max-tests. Owner: the control thread.
struct TestSlots {
  std::uint32_t taken = 0;
  std::uint32_t max = 1;
  std::uint64_t busy_refusals = 0;  // for --metrics
  bool try_take() noexcept {
    if (taken >= max) {
      ++busy_refusals;
      return false;
    }
    ++taken;
    return true;
  }
  void release() noexcept { --taken; }
};

class ForeignClients {
 public:
  virtual ~ForeignClients() = default;
  // A connection whose first four bytes (`first`, already read) are not testio's magic. Finishes
  // reading what identifies it within `handshake_limit`. Returns whether a test ran and succeeded
  // (nullopt: no test ran, e.g. a data connection, a refusal or a stranger). Never throws.
  virtual asio::awaitable<std::optional<bool>> serve(asio::ip::tcp::socket socket,
                                                     std::array<unsigned char, 4> first, TestSlots& slots,
                                                     std::chrono::steady_clock::duration handshake_limit) = 0;
  // A datagram on the server's UDP `port` that is no testio flow's hello (an iperf3 client's UDP
  // stream saying it is there). True when taken.
  virtual bool take_datagram(const unsigned char* data, std::size_t size, const asio::ip::udp::endpoint& from,
                             std::uint16_t port) {
    (void)data, (void)size, (void)from, (void)port;
    return false;
  }
  // What the running tests have received and sent so far, as --metrics reads a testio test's
  // (ServerTest::bytes_so_far): zeros for a test once it is reported, as its report holds them.
  virtual std::pair<std::uint64_t, std::uint64_t> bytes_so_far() const noexcept { return {0, 0}; }
};

}  // namespace testio::session
