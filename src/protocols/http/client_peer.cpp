#include "protocols/http/client_peer.hpp"

#include <chrono>
#include <string>

#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>

namespace testio::http {
namespace {

using namespace std::chrono_literals;
using lifecycle::ClientPeer;
using lifecycle::PeerPath;

// -c URL: the http workload's slots reach the servers themselves. Owner: the control thread.
class HttpPeer : public ClientPeer {
 public:
  explicit HttpPeer(const config::Config& config) : config_(config) {}

  asio::awaitable<PeerPath> handshake(const spec::TestSpec&, unsigned) override { co_return PeerPath{}; }
  void describe_start(report::StartInfo& start) const override {
    // The downloads connect to their URLs, not to -c HOST -p PORT.
    start.connecting_host.clear();
    start.connecting_port = 0;
    start.peer = config_.urls.size() == 1 ? config_.urls.front() : std::to_string(config_.urls.size()) + " URLs";
    start.peer_protocol = "HTTP";
  }
  // Each transfer is bounded by --max-time; the run as a whole by the counted test's limit.
  std::chrono::seconds window_grace() const override { return 1s; }
  // The workload says which transfers failed, and why.
  std::string unfinished(const workloads::DirectionLayout&) const override { return {}; }
  std::string describe(const std::exception& error) const override { return error.what(); }

 private:
  const config::Config& config_;
};

}  // namespace

std::unique_ptr<ClientPeer> http_peer(const config::Config& config) { return std::make_unique<HttpPeer>(config); }

}  // namespace testio::http
