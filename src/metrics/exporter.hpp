// `testio exporter --listen ADDRESS:PORT`: a probe exporter in the manner of blackbox_exporter
// and iperf3_exporter. GET /probe?target=HOST[:PORT]&... runs that test as a testio client in a
// child process and answers with its metrics (metrics/test_metrics.hpp), testio_up 0 and the
// reason when it fails; /metrics has the exporter's own counters. Owner: the main thread's
// io_context; every member is touched only there.
#pragma once

#include <cstdint>
#include <string>

#include "net/asio_fwd.hpp"
#include "config/exporter_config.hpp"
#include "metrics/http_listener.hpp"
#include "metrics/probe.hpp"

namespace testio::metrics {

class Exporter {
 public:
  Exporter(asio::io_context& io, const config::ExporterConfig& config);

  net::Awaitable<HttpResponse> handle(const HttpRequest& request);
  HttpListener& listener() noexcept { return listener_; }
  std::uint32_t probes_running() const noexcept { return running_; }

 private:
  net::Awaitable<HttpResponse> probe(const HttpRequest& request);
  // Runs the planned probe in a scratch directory; the metrics, or testio_up 0 and the reason.
  net::Awaitable<HttpResponse> run(const Probe& probe, const std::string& target);
  std::string own_metrics() const;

  asio::io_context& io_;
  const config::ExporterConfig& config_;
  HttpListener listener_;
  std::uint32_t running_ = 0;
  std::uint64_t succeeded_ = 0, failed_ = 0, refused_ = 0, invalid_ = 0;
};

// Runs the exporter until SIGINT or SIGTERM. Returns the exit code.
int run_exporter(const config::ExporterConfig& config);

}  // namespace testio::metrics
