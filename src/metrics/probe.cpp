#include "metrics/probe.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string_view>

namespace testio::metrics {
namespace {

// Time for the handshake, the connections and the results beyond the test itself.
constexpr double kSetupAllowance_s = 10;
// Prometheus' own timeout less this, so the answer arrives before it gives up.
constexpr double kScrapeMargin_s = 0.5;

bool all_of(const std::string& text, const char* allowed) {
  return !text.empty() && text.find_first_not_of(allowed) == std::string::npos;
}

// HOST, HOST:PORT or [IPv6]:PORT; a host name or address, never something an option could be.
bool split_target(const std::string& target, std::string& host, std::string& port) {
  std::string rest;
  if (!target.empty() && target.front() == '[') {
    const std::size_t close = target.find(']');
    if (close == std::string::npos) return false;
    host = target.substr(1, close - 1);
    rest = target.substr(close + 1);
    if (!all_of(host, "0123456789abcdefABCDEF:.")) return false;
  } else {
    const std::size_t colon = target.find(':');
    if (colon != std::string::npos && colon != target.rfind(':')) {  // bare IPv6
      host = target;
      return all_of(host, "0123456789abcdefABCDEF:.");
    }
    host = target.substr(0, colon);
    rest = colon == std::string::npos ? "" : target.substr(colon);
    if (!all_of(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") || host.front() == '-' ||
        host.size() > 253)
      return false;
  }
  if (rest.empty()) return true;
  port = rest.substr(1);
  return rest.front() == ':' && all_of(port, "0123456789") && port.size() <= 5 && std::stoul(port) <= 65535;
}

bool flag(const HttpRequest& request, const char* name, std::string& problem) {
  const std::string* value = request.parameter(name);
  if (!value || *value == "0" || *value == "false") return false;
  if (*value == "1" || *value == "true") return true;
  problem = std::string(name) + "=" + *value + " is not 1 or 0";
  return false;
}

bool number(const std::string& text, double& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

std::string check_names(const HttpRequest& request) {
  static const std::string_view known[] = {"target", "connections", "time", "reverse", "bidir",
                                           "udp", "bitrate", "length", "rr", "iperf3"};
  for (const auto& [name, value] : request.query) {
    if (std::find(std::begin(known), std::end(known), name) == std::end(known))
      return "'" + name + "' is not a probe parameter (" + kProbeParameters + ")";
    if (request.parameter(name) != &value) return name + " is given twice";
  }
  return "";
}

// connections and time: the extent, inside the exporter's caps.
void plan_extent(const HttpRequest& request, const config::ExporterConfig& config, Probe& probe) {
  if (const std::string* connections = request.parameter("connections")) {
    if (!all_of(*connections, "0123456789") || connections->size() > 6 || std::stoul(*connections) < 1 ||
        std::stoul(*connections) > config.max_connections) {
      probe.problem = "connections=" + *connections + " is not between 1 and " + std::to_string(config.max_connections) +
                      " (--max-probe-connections)";
      return;
    }
    probe.args.push_back(*connections);
  }
  probe.time_s = 5;
  if (const std::string* time = request.parameter("time")) {
    if (!number(*time, probe.time_s) || probe.time_s < 0.1 || probe.time_s > config.max_probe_time_s) {
      probe.problem = "time=" + *time + " is not between 0.1 and " + std::to_string(static_cast<int>(config.max_probe_time_s)) +
                      " seconds (--max-probe-time)";
      return;
    }
  }
  char text[32];
  std::snprintf(text, sizeof text, "%g", probe.time_s);
  probe.args.insert(probe.args.end(), {"-t", text});
  probe.deadline_s = probe.time_s + kSetupAllowance_s;
  if (request.scrape_timeout_s) {
    if (probe.time_s + 1 > *request.scrape_timeout_s - kScrapeMargin_s) {
      std::snprintf(text, sizeof text, "%g", *request.scrape_timeout_s);
      probe.problem = "time=" + std::to_string(probe.time_s).substr(0, 5) + " does not fit Prometheus' scrape timeout of " +
                      text + " s with a second to spare; raise scrape_timeout or lower time";
      return;
    }
    probe.deadline_s = std::min(probe.deadline_s, *request.scrape_timeout_s - kScrapeMargin_s);
  }
}

// reverse, bidir, udp, bitrate, length, rr, iperf3: what the test is.
void plan_kind(const HttpRequest& request, Probe& probe) {
  const bool reverse = flag(request, "reverse", probe.problem), bidir = flag(request, "bidir", probe.problem);
  const bool udp = flag(request, "udp", probe.problem), rr = flag(request, "rr", probe.problem);
  const bool iperf3 = flag(request, "iperf3", probe.problem);
  if (!probe.problem.empty()) return;
  if (reverse) probe.args.push_back("-R");
  if (bidir) probe.args.push_back("--bidir");
  if (udp) probe.args.push_back("-u");
  if (rr) probe.args.push_back("--rr");
  if (iperf3) probe.args.push_back("--iperf3");
  for (const char* sized : {"bitrate", "length"})
    if (const std::string* value = request.parameter(sized)) {
      if (!all_of(*value, "0123456789.kKmMgGtT") || value->size() > 16) {
        probe.problem = std::string(sized) + "=" + *value + " is not a number with an optional K, M, G or T";
        return;
      }
      probe.args.insert(probe.args.end(), {std::string(sized[0] == 'b' ? "-b" : "-l"), *value});
    }
}

}  // namespace

Probe plan_probe(const HttpRequest& request, const config::ExporterConfig& config) {
  Probe probe;
  if (std::string problem = check_names(request); !problem.empty()) return {problem, {}, 0, 0};
  const std::string* target = request.parameter("target");
  std::string host, port;
  if (!target) return {"a probe needs target=HOST[:PORT]", {}, 0, 0};
  if (!split_target(*target, host, port)) return {"target=" + *target + " is not HOST, HOST:PORT or [IPv6]:PORT", {}, 0, 0};
  probe.args = {"-c", host};
  if (!port.empty()) probe.args.insert(probe.args.end(), {"-p", port});
  plan_extent(request, config, probe);
  if (probe.problem.empty()) plan_kind(request, probe);
  if (!probe.problem.empty()) probe.args.clear();
  return probe;
}

}  // namespace testio::metrics
