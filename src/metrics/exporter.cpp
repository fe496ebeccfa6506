#include "metrics/exporter.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <spawn.h>
#include <stdlib.h>

#include "metrics/child_process.hpp"
#include "metrics/test_metrics.hpp"
#include "util/log.hpp"
#include "util/mapped_file.hpp"
#include "util/spawn.hpp"

namespace testio::metrics {
namespace {

using G = MetricType;

constexpr const char* kIndex =
    "testio exporter\n"
    "  /probe?target=HOST[:PORT]&connections=N&time=SECONDS[&reverse=1|&bidir=1][&udp=1&bitrate=RATE]"
    "[&length=SIZE][&rr=1][&iperf3=1]\n"
    "  /metrics   the exporter's own counters\n";

std::string failure_of(const ChildEnd& end, const Probe& probe, const std::string& stderr_text) {
  char text[96];
  if (!end.started) return end.start_problem;
  if (end.killed_at_deadline) {
    std::snprintf(text, sizeof text, "the probe took longer than %.1f s and was killed", probe.deadline_s);
    return text;
  }
  if (end.signal) return "testio ended with signal " + std::to_string(end.signal);
  std::string said = util::last_complaint(stderr_text);
  return said.empty() ? "testio exited with code " + std::to_string(end.exit_code) : said;
}

HttpResponse failed_probe(const std::string& reason) {
  Exposition out;
  add_up(out, false, reason);
  return {200, kContentType, out.text()};
}

}  // namespace

Exporter::Exporter(asio::io_context& io, const config::ExporterConfig& config)
    : io_(io),
      config_(config),
      listener_(io, config.listen, [this](const HttpRequest& request) { return handle(request); }, "the exporter") {}

asio::awaitable<HttpResponse> Exporter::handle(const HttpRequest& request) {
  if (request.path == "/probe") co_return co_await probe(request);
  if (request.path == "/metrics") co_return HttpResponse{200, kContentType, own_metrics()};
  if (request.path == "/") co_return plain_response(200, kIndex);
  co_return plain_response(404, request.path + " is not served here; try /probe or /metrics");
}

asio::awaitable<HttpResponse> Exporter::probe(const HttpRequest& request) {
  Probe probe = plan_probe(request, config_);
  if (!probe.problem.empty()) {
    ++invalid_;
    co_return plain_response(400, "bad probe: " + probe.problem);
  }
  const std::string target = *request.parameter("target");
  if (running_ >= config_.max_probes) {
    ++refused_;
    util::log_warn("probe of {} refused: {} already running", target, running_);
    co_return failed_probe(std::to_string(running_) + " probes are already running (--max-probes " +
                           std::to_string(config_.max_probes) + ")");
  }
  ++running_;
  HttpResponse response = co_await run(probe, target);
  --running_;
  co_return response;
}

asio::awaitable<HttpResponse> Exporter::run(const Probe& probe, const std::string& target) {
  std::string scratch = (std::filesystem::temp_directory_path() / "testio-probe-XXXXXX").string();
  if (!::mkdtemp(scratch.data())) {
    ++failed_;
    co_return failed_probe("cannot make a scratch directory in " + std::filesystem::temp_directory_path().string());
  }
  const std::filesystem::path dir = scratch, result = dir / "probe.prom", errors = dir / "stderr";
  std::vector<std::string> args = probe.args;
  args.insert(args.end(), {"--prometheus", result.string()});
  const auto started = std::chrono::steady_clock::now();
  ChildEnd end = co_await run_child(io_, config_.binary, args, errors.string(),
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(probe.deadline_s)));
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string metrics = util::read_whole_file(result.string()).value_or("");
  const std::string stderr_text = util::read_whole_file(errors.string()).value_or("");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  // A usage error is the query's fault, not the target's: Prometheus shows it as a failed scrape.
  if (end.exit_code == 2 && metrics.empty()) {
    ++invalid_;
    co_return plain_response(400, "bad probe: " + util::last_complaint(stderr_text));
  }
  const bool succeeded = end.started && !end.killed_at_deadline && end.exit_code == 0;
  (succeeded ? succeeded_ : failed_) += 1;
  if (!succeeded) util::log_warn("probe of {} failed: {}", target, failure_of(end, probe, stderr_text));
  else util::log_info("probe of {} succeeded in {:.1f} s", target, took_s);
  if (metrics.empty() || end.killed_at_deadline) co_return failed_probe(failure_of(end, probe, stderr_text));
  Exposition duration;
  duration.single("testio_probe_duration_seconds", G::gauge, "How long the probe took, connecting included", took_s);
  co_return HttpResponse{200, kContentType, metrics + duration.text()};
}

std::string Exporter::own_metrics() const {
  Exposition out;
  out.single("testio_build_info", G::gauge, "Always 1; the version is its label", 1, {{"version", TESTIO_VERSION}});
  out.family("testio_exporter_probes_total", G::counter, "Probes asked for, by how they ended");
  out.sample(static_cast<double>(succeeded_), {{"result", "succeeded"}});
  out.sample(static_cast<double>(failed_), {{"result", "failed"}});
  out.sample(static_cast<double>(refused_), {{"result", "refused"}});
  out.sample(static_cast<double>(invalid_), {{"result", "invalid"}});
  out.single("testio_exporter_probes_running", G::gauge, "Probes running now", running_);
  return out.text();
}

int run_exporter(const config::ExporterConfig& config) {
  asio::io_context io(1);
  Exporter exporter(io, config);
  util::log_info("exporter listening on {} (port {}); probes run {}", config.listen, exporter.listener().port(),
               config.binary);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer settle(io);
  int looks = 0;
  // Stopped: the running probes end with their killed children and remove their scratch
  // directories, looked for every 50 ms, for 5 s at most (a scraper's open connection would
  // otherwise keep the loop going).
  std::function<void(const asio::error_code&)> when_settled = [&](const asio::error_code& error) {
    if (error || exporter.probes_running() == 0 || ++looks >= 100) return io.stop();
    settle.expires_after(std::chrono::milliseconds(50));
    settle.async_wait(when_settled);
  };
  signals.async_wait([&](const asio::error_code& error, int) {
    if (error) return;
    exporter.listener().stop();
    kill_children();
    when_settled({});
  });
  asio::co_spawn(io, exporter.listener().serve(), asio::detached);
  io.run();
  return 0;
}

namespace {

// The children being waited for; touched only on the exporter's one thread.
std::set<pid_t>& children() {
  static std::set<pid_t> running;
  return running;
}

}  // namespace

asio::awaitable<ChildEnd> run_child(asio::io_context& io, const std::string& binary,
                                    const std::vector<std::string>& args, const std::string& stderr_path,
                                    std::chrono::steady_clock::duration deadline) {
  ChildEnd end;
  const pid_t pid = util::spawn_process(binary, args, "", stderr_path);
  if (pid < 0) {
    end.start_problem = "cannot run " + binary + ": " + std::strerror(errno);
    co_return end;
  }
  end.started = true;
  children().insert(pid);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    // The pidfd turns readable when the child exits; the timer kills it first if it overstays.
    asio::posix::stream_descriptor exited(io, pidfd);
    asio::steady_timer limit(io, deadline);
    limit.async_wait([pid, &end](const asio::error_code& ec) {
      if (ec) return;
      end.killed_at_deadline = true;
      ::kill(pid, SIGKILL);
    });
    asio::error_code ignored;
    co_await exited.async_wait(asio::posix::stream_descriptor::wait_read,
                               asio::redirect_error(asio::use_awaitable, ignored));
    limit.cancel();
  }
  children().erase(pid);
  util::ProcessEnd process = util::reap_process(pid);
  end.exit_code = process.exit_code;
  end.signal = process.signal;
  co_return end;
}

void kill_children() noexcept {
  for (pid_t pid : children()) ::kill(pid, SIGKILL);
}

}  // namespace testio::metrics
