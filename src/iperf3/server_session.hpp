// `testio -s` serving stock iperf3 clients on its own port: the connections that begin with a
// 37-byte cookie instead of testio's magic. A cookie the server has not seen opens a test; one of
// a test gathering its streams is a data connection. Owner: the server's control thread.
#pragma once

#include <map>

#include "config/config.hpp"
#include "session/foreign_clients.hpp"
#include "iperf3/messages.hpp"
#include "iperf3/wire.hpp"
#include "report/reporter.hpp"

namespace testio::iperf3 {

class Control;
class DataStreams;
struct ServerTest;

class Iperf3Clients final : public session::ForeignClients {
 public:
  Iperf3Clients(const config::Config& config, report::Reporter& reporter) : config_(config), reporter_(reporter) {}

  asio::awaitable<std::optional<bool>> serve(asio::ip::tcp::socket socket, std::array<unsigned char, 4> first,
                                             session::TestSlots& slots,
                                             std::chrono::steady_clock::duration handshake_limit) override;
  bool take_datagram(const unsigned char* data, std::size_t size, const asio::ip::udp::endpoint& from,
                     std::uint16_t port) override;

 private:
  // The test's steps, in the order run_test() takes them.
  asio::awaitable<bool> run_test(Control& control, ServerTest& test);
  asio::awaitable<Params> exchange_params(Control& control, ServerTest& test);
  asio::awaitable<void> gather_streams(Control& control, ServerTest& test, const Params& params);
  asio::awaitable<void> run_streams(Control& control, ServerTest& test, const Params& params, DataStreams& streams,
                                    report::StartInfo& start);
  asio::awaitable<Results> exchange_results(Control& control, ServerTest& test, const Params& params,
                                            DataStreams& streams);
  bool report(const DataStreams& streams, const report::StartInfo& start, const Results& client);

  const config::Config& config_;
  report::Reporter& reporter_;
  std::map<Cookie, ServerTest*> tests_;  // by cookie, while each runs
};

}  // namespace testio::iperf3
