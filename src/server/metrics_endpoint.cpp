// --metrics: the server's /metrics endpoint, and what a scrape reads.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/ip/tcp.hpp>

#include "server/server.hpp"

#include "util/log.hpp"

namespace testio::server {

std::string Server::metrics_text() const {
  metrics::ServerState state{slots_.taken(), slots_.waiting(), slots_.busy_refusals()};
  {
    auto [received, sent] = door_.bytes_so_far();
    state.live_received_bytes += received;
    state.live_sent_bytes += sent;
  }
  if (foreign_) {
    auto [received, sent] = foreign_->bytes_so_far();
    state.live_received_bytes += received;
    state.live_sent_bytes += sent;
  }
  return reporter_.exposition(state);
}

void open_metrics_endpoint(asio::io_context& io, const std::string& address, Server& server,
                           std::optional<metrics::HttpListener>& endpoint) {
  endpoint.emplace(io, address, [&server](const metrics::HttpRequest& request) -> asio::awaitable<metrics::HttpResponse> {
    if (request.path == "/metrics") co_return metrics::HttpResponse{200, metrics::kContentType, server.metrics_text()};
    co_return metrics::plain_response(404, request.path + " is not served here; try /metrics");
  }, "metrics");
  util::log_info("metrics on port {} ({}/metrics)", endpoint->port(), address);
  asio::co_spawn(io, endpoint->serve(), asio::detached);
}

}  // namespace testio::server
