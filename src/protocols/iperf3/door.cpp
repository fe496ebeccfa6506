// The iperf3 clients at testio's door: a connection whose cookie the server has not seen opens a
// test (within the server's slots, and not on a keyed server); one of a test gathering its
// streams is a data connection, and a UDP datagram of four bytes is a UDP stream saying it is
// there: each goes to the test's lifecycle::ServerTest. What the running tests have counted so far
// is read here for --metrics.
#include <asio/use_awaitable.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include "lifecycle/deadline.hpp"
#include "lifecycle/connect.hpp"
#include "protocols/iperf3/channel.hpp"
#include "protocols/iperf3/served.hpp"
#include "protocols/iperf3/server_session.hpp"
#include "util/log.hpp"

namespace testio::iperf3 {

using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

std::string peer_of(const tcp::socket& socket) {
  asio::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown peer") : lifecycle::endpoint_text(endpoint);
}

// Best effort: ACCESS_DENIED to a client that is refused, then the socket closes.
asio::awaitable<void> deny(tcp::socket& socket) {
  try {
    const char denied = static_cast<char>(State::access_denied);
    co_await lifecycle::within(asio::async_write(socket, asio::buffer(&denied, 1), asio::use_awaitable), 2s,
                             "refusing an iperf3 connection");
  } catch (const std::exception&) {
  }
}

}  // namespace

asio::awaitable<std::optional<bool>> Iperf3Clients::serve(tcp::socket socket, std::array<unsigned char, 4> first,
                                                          lifecycle::TestSlots& slots,
                                                          std::chrono::steady_clock::duration handshake_limit) {
  const std::string peer = peer_of(socket);
  std::array<unsigned char, kCookieBytes> bytes{};
  std::copy(first.begin(), first.end(), bytes.begin());
  try {
    if (!may_start_cookie(first.data(), first.size())) {
      spdlog::warn("connection from {} is not a testio client, nor an iperf3 one; closed", peer);
      co_return std::nullopt;
    }
    co_await lifecycle::within(asio::async_read(socket, asio::buffer(bytes.data() + first.size(), kCookieBytes - first.size()),
                                              asio::use_awaitable),
                             handshake_limit, "waiting for the iperf3 cookie");
  } catch (const std::exception& error) {
    spdlog::warn("connection from {} is not a testio client, nor an iperf3 one ({}); closed", peer, error.what());
    co_return std::nullopt;
  }
  if (!is_cookie(bytes.data(), bytes.size())) {
    spdlog::warn("connection from {} is not a testio client, nor an iperf3 one; closed", peer);
    co_return std::nullopt;
  }
  const Cookie cookie = cookie_from(bytes.data());
  if (auto found = tests_.find(cookie); found != tests_.end()) {
    ServedTest& served = *found->second;
    if (served.udp || !served.takes_streams()) {
      spdlog::warn("iperf3 data connection from {} arrived outside its test's set-up; closed", peer);
      co_await deny(socket);
      co_return std::nullopt;
    }
    const std::string refused = served.test->attach(served.arrived++, std::move(socket));
    if (!refused.empty()) spdlog::warn("iperf3 data connection from {} refused: {}", peer, refused);
    co_return std::nullopt;
  }
  if (!config_.psk_file.empty()) {
    // iperf3 clients cannot prove testio's key; a keyed server does not serve them at all.
    spdlog::warn("refused an iperf3 test from {}: this server requires a key (--psk-file), which iperf3 cannot give",
                 peer);
    Control refused(std::move(socket));
    co_await refused.write_error(kErrorAuthorization);
    co_return std::nullopt;
  }
  if (!slots.try_take()) {
    slots.count_busy();
    spdlog::info("refused an iperf3 test from {}: busy", peer);
    co_await deny(socket);
    co_return std::nullopt;
  }
  ServedTest served;
  served.cookie = cookie;
  served.peer = peer;
  asio::error_code unknown;
  served.peer_address = socket.remote_endpoint(unknown).address();
  served.local_address = socket.local_endpoint(unknown).address();
  tests_.emplace(cookie, &served);
  Control control(std::move(socket));
  const std::unique_ptr<metrics::ServedTestReport> report = metrics_.test_report(peer);
  const std::string who = "iperf3 test #" + std::to_string(report->number()) + " from " + peer;
  bool succeeded = false;
  std::string ended;
  try {
    succeeded = co_await run_test(control, served, *report);
    spdlog::info("{} finished", who);
  } catch (const PeerError& error) {
    ended = error.what();
  } catch (const std::system_error& error) {
    ended = "the iperf3 client went away (" + error.code().message() + ")";
  } catch (const std::exception& error) {
    ended = error.what();
  }
  tests_.erase(cookie);
  slots.release();
  if (!ended.empty()) {
    spdlog::warn("{} ended: {}", who, ended);
    if (served.started) report->error(ended);
  }
  co_return succeeded;
}

std::pair<std::uint64_t, std::uint64_t> Iperf3Clients::bytes_so_far() const noexcept {
  std::uint64_t received = 0, sent = 0;
  for (const auto& [cookie, served] : tests_) {
    if (!served->test) continue;
    auto [test_received, test_sent] = served->test->bytes_so_far();
    received += test_received;
    sent += test_sent;
  }
  return {received, sent};
}

// iperf3's UDP stream says it is there with four bytes (its UDP_CONNECT_MSG, in the client's
// byte order); the server connects a socket of the same port to it and answers from that socket.
bool Iperf3Clients::take_datagram(const unsigned char* data, std::size_t size, const asio::ip::udp::endpoint& from,
                                  std::uint16_t port) {
  (void)data;  // iperf3's own server does not read it either
  if (size != kUdpConnectBytes) return false;
  for (auto& [cookie, served] : tests_) {
    if (!served->udp || !served->takes_streams() || served->peer_address != from.address()) continue;
    try {
      asio::ip::udp::socket socket(served->executor);
      const asio::ip::udp::endpoint local(served->local_address, port);
      socket.open(local.protocol());
      socket.set_option(asio::socket_base::reuse_address(true));
      socket.bind(local);
      socket.connect(from);
      const std::uint32_t reply = kUdpConnectReply;  // host order, as iperf3 writes it
      socket.send(asio::buffer(&reply, sizeof(reply)));
      const std::string refused = served->test->gather_flow(served->arrived++, std::move(socket));
      if (!refused.empty()) spdlog::warn("an iperf3 UDP stream from {} was refused: {}", served->peer, refused);
    } catch (const std::system_error& error) {
      spdlog::warn("an iperf3 UDP stream from {} could not be taken: {}", served->peer, error.code().message());
    }
    return true;
  }
  return false;
}

}  // namespace testio::iperf3
