// A peer told nothing but the data, so what this side measured is the report: a plain TCP
// receiver (nc, socat, a script, a testio raw sink) or echo server (--raw, --rr --raw).
#include <sys/socket.h>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

#include "report/raw_report.hpp"
#include "protocols/plain/client_peer.hpp"
#include "lifecycle/connect.hpp"
#include "lifecycle/start.hpp"
#include "workloads/registry.hpp"

namespace testio::plain {
namespace {

using lifecycle::ClientPeer;
using lifecycle::PeerPath;
using lifecycle::data_tuning;
using lifecycle::resolve;

using namespace std::chrono_literals;

// One raw send over one connection without -i, in text, prints the line a raw sink prints for it,
// and --rr --raw its figures, to `out` at the end; nothing before. Owner: the control thread.
class PlainLineReporter : public report::Reporter {
 public:
  PlainLineReporter(std::ostream& out, const config::Config& config) : out_(out), config_(config) {}
  void start(const report::StartInfo&) override {}
  void interval(const stats::IntervalRecord&) override {}
  void end(const report::TestReport& report) override;
  void error(const std::string&) override {}

 private:
  std::ostream& out_;
  const config::Config& config_;
};

void PlainLineReporter::end(const report::TestReport& report) {
  for (const auto& section : report.sections)
    if (section->print_alone(out_, report.start.peer, config_.output)) return;
  report::RawTransfer transfer;
  transfer.role = "sent";
  transfer.peer = report.start.peer;
  if (!report.sender.totals.empty()) {
    transfer.bytes = report.sender.totals.front().bytes;
    transfer.calls = report.sender.totals.front().calls;
  }
  transfer.elapsed_s = report.sender.wall_s;
  transfer.hash = std::string(util::to_string(report.start.spec.hash));
  if (!report.digests.sent.empty()) transfer.digest = report.digests.sent.front();
  if (!report.sender.totals.empty() && report.sender.totals.front().failed)
    transfer.error = "the connection ended before the receiver closed it";
  else if (report.incomplete)
    transfer.error = report.ended_because;
  report::print_raw_transfer(out_, transfer, config_.output, config_.unit);
}

// --raw: connections to the address the first one reached. Owner: the control thread.
class PlainTcpPeer : public ClientPeer {
 public:
  PlainTcpPeer(const config::Config& config, std::ostream& out)
      : config_(config), echo_(workloads::of(config.spec).answered()), line_(out, config) {}

  asio::awaitable<PeerPath> handshake(const spec::TestSpec& spec, unsigned) override {
    std::vector<asio::ip::tcp::endpoint> endpoints = co_await resolve(config_);
    net::check_tuning(data_tuning(spec, true, config_.mss), endpoints.front().address().is_v4() ? AF_INET : AF_INET6);
    co_return PeerPath{std::move(endpoints), nullptr};
  }
  void describe_start(report::StartInfo& start) const override {
    start.peer_protocol = "plain TCP";
  }
  // Each sender waits up to 30 s for its receiver's close (engines/asio_bulk.cpp), then a little more.
  std::chrono::seconds window_grace() const override { return echo_ ? 30s : 40s; }
  std::string unfinished(const workloads::DirectionLayout&) const override {
    return echo_ ? "the echo server did not answer every request within the window"
                                 : "the receiver did not read everything and close within the window";
  }
  std::string describe(const std::exception& error) const override {
    if (auto* system = dynamic_cast<const std::system_error*>(&error))
      return "raw send failed: " + system->code().message();
    return error.what();
  }
  // JSON (a document or events) is for dashboards, which read one connection's as they read N's.
  report::Reporter& reporter(report::Reporter& given) override {
    const bool one_transfer = config_.spec.connections == 1 && config_.spec.interval_s <= 0;
    const bool text = config_.output == config::OutputFormat::text;
    return echo_ || (one_transfer && text) ? line_ : given;
  }

 private:
  const config::Config& config_;
  const bool echo_;  // --rr --raw: an echo server answers
  PlainLineReporter line_;
};

}  // namespace

std::unique_ptr<ClientPeer> plain_tcp_peer(const config::Config& config, std::ostream& out) {
  return std::make_unique<PlainTcpPeer>(config, out);
}

}  // namespace testio::plain
