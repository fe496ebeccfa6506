// The report's start section as iperf3's -J shapes it (its connections, host, socket buffers and
// test_start), with testio's own part under start.testio: the whole spec and the settings
// dashboards read by name. Declared in json_reporter.hpp beside the interval and end pieces.
#include <sys/utsname.h>

#include <ctime>

#include <nlohmann/json.hpp>

#include "report/json_reporter.hpp"
#include "report/path_report.hpp"

namespace testio::report {
namespace {

using json = Json;

std::string system_info() {
  utsname name{};
  if (uname(&name) != 0) return "";
  return std::string(name.sysname) + " " + name.nodename + " " + name.release + " " + name.version + " " +
         name.machine;
}

std::string http_date(std::int64_t seconds) {
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

// testio's own part of the start: the whole spec in its one JSON mapping, and some of its fields
// again under the names dashboards have read since before the spec existed, taken from that
// mapping, so each field is turned into JSON in one place.
json testio_start_json(const StartInfo& start) {
  const json spec = spec::to_json(start.spec, spec::Form::report);
  return {{"role", start.from_client ? "client" : "server"},
          {"client_threads", start.client_threads},
          {"server_threads", start.server_threads},
          {"plain_peer", start.plain_peer()},
          {"recv_mode", spec["recv_mode"]},
          {"send_mode", spec["send_mode"]},
          {"engine", spec["engine"]},
          {"workload", spec["workload"]},
          {"tuning",
           {{"congestion_requested", spec["congestion"]},
            {"mss_requested", start.mss_requested},
            {"no_delay", start.no_delay},
            {"rate_lowat", spec["rate_lowat"]},
            {"client_cpus", spec["cpus"]},
            {"server_cpus", start.server_cpus},
            {"cport_first", start.cport_first},
            {"cport_last", start.cport_last},
            {"spread_asked", spread_counts_json(start.spread_asked)},
            {"rate_bps", spec["rate_bps"]},
            {"fq_rate_bps", start.fq_rate_bps},
            {"bind_device", start.bind_device}}},
          {"interval", spec["interval_s"]},
          {"spec", spec}};
}

}  // namespace

json start_json(const StartInfo& start) {
  const spec::TestSpec& spec = start.spec;
  json connected = json::array();
  for (std::size_t i = 0; i < start.connected.size(); ++i) {
    const StreamEndpoints& ends = start.connected[i];
    connected.push_back({{"socket", static_cast<int>(i + 1)}, {"local_host", ends.local_host},
                         {"local_port", ends.local_port}, {"remote_host", ends.remote_host},
                         {"remote_port", ends.remote_port}});
  }
  json result = {
      {"connected", std::move(connected)},
      {"version", std::string("testio ") + TESTIO_VERSION},
      {"system_info", system_info()},
      {"timestamp", {{"time", http_date(start.timestamp)}, {"timesecs", start.timestamp}}},
      {"cookie", ""},
      {"tcp_mss_default", start.mss},
      {"tcp_mss", start.mss_requested},
      {"sock_bufsize", spec.window},
      {"sndbuf_actual", start.sndbuf_actual},
      {"rcvbuf_actual", start.rcvbuf_actual},
      {"test_start",
       {{"protocol", "TCP"}, {"num_streams", start.connections()}, {"blksize", start.call_size ? start.call_size : spec.buffer},
        {"omit", spec.omit_s}, {"duration", spec.duration_s}, {"bytes", spec.total_bytes},
        {"blocks", 0}, {"reverse", start.local_is_sender != start.from_client ? 1 : 0}, {"tos", spec.tos},
        {"bidir", start.bidir() ? 1 : 0}}},
      {"testio", testio_start_json(start)}};
  if (start.from_client)
    result["connecting_to"] = {{"host", start.connecting_host}, {"port", start.connecting_port}};
  else
    result["accepted_connection"] = {{"host", start.peer}};
  return result;
}

}  // namespace testio::report
