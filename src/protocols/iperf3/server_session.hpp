// `testio -s` serving stock iperf3 clients on its own port: the connections that begin with a
// 37-byte cookie instead of testio's magic. A cookie the server has not seen opens a test; one of
// a test gathering its streams is a data connection (server.cpp); the parameters are taken in
// server_session.cpp, and the test then runs through testio's one server lifecycle
// (lifecycle::ServerTest) with an iperf3 peer (server_peer.cpp). Owner: the server's control thread.
#pragma once

#include <map>

#include "net/asio_fwd.hpp"
#include "config/config.hpp"
#include "lifecycle/foreign_clients.hpp"
#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/wire.hpp"
#include "metrics/server_metrics.hpp"
#include "report/reporter.hpp"

namespace testio::iperf3 {

class Control;
struct ServedTest;

class Iperf3Clients final : public lifecycle::ForeignClients {
 public:
  // Every test reports through a report `metrics` makes for it (counted there).
  Iperf3Clients(const config::Config& config, metrics::ServerMetrics& metrics) : config_(config), metrics_(metrics) {}

  net::Awaitable<std::optional<bool>> serve(net::TcpSocket socket, std::array<unsigned char, 4> first,
                                            lifecycle::TestSlots& slots,
                                            std::chrono::steady_clock::duration handshake_limit) override;
  bool take_datagram(const unsigned char* data, std::size_t size, const net::UdpEndpoint& from,
                     std::uint16_t port) override;
  std::pair<std::uint64_t, std::uint64_t> bytes_so_far() const noexcept override;
  metrics::Protocol protocol() const noexcept override { return metrics::Protocol::iperf3; }

 private:
  // The parameters, then the test through lifecycle::ServerTest, reported to `reporter`.
  net::Awaitable<bool> run_test(Control& control, ServedTest& served, report::Reporter& reporter);
  net::Awaitable<Params> exchange_params(Control& control, ServedTest& served);

  const config::Config& config_;
  metrics::ServerMetrics& metrics_;
  std::map<Cookie, ServedTest*> tests_;  // by cookie, while each runs
};

}  // namespace testio::iperf3
