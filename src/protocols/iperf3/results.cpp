#include "protocols/iperf3/results.hpp"

#include <algorithm>
#include <cstdio>

#include "stats/summary.hpp"
#include "util/units.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::iperf3 {
namespace {

// No receive mark: iperf3's data ends without EOF (TEST_END goes on the control connection), so
// bytes held back for a batch would never be counted.
constexpr workloads::bulk::Options kIperf3Data{.data_end_with_eof = false};

void add_direction(std::string& text, const DirectionResults& direction, const char* role) {
  if (!direction.present) return;
  std::uint64_t bytes = 0;
  double seconds = 0;
  char line[160];
  for (std::size_t i = 0; i < direction.side.streams.size(); ++i) {
    const stats::StreamFigures& stream = direction.side.streams[i];
    const double span = stream.end_s - stream.start_s;
    std::snprintf(line, sizeof line, "[%5u] %15llu B %8.2f s %12.2f Mbit/s  %s\n", direction.connections[i] + 1,
                  static_cast<unsigned long long>(stream.bytes), span, util::bits_per_second(stream.bytes, span) / 1e6,
                  role);
    text += line;
    bytes += stream.bytes;
    seconds = std::max(seconds, span);
  }
  std::snprintf(line, sizeof line, "[  SUM] %15llu B %8.2f s %12.2f Mbit/s  %s\n", static_cast<unsigned long long>(bytes),
                seconds, util::bits_per_second(bytes, seconds) / 1e6, role);
  text += line;
}

}  // namespace

std::string output_text(const DirectionResults& sent, const DirectionResults& received) {
  std::string text = std::string("testio ") + TESTIO_VERSION + " server, as it counted:\n";
  add_direction(text, received, "receiver");
  add_direction(text, sent, "sender");
  return text;
}

std::pair<DirectionResults, DirectionResults> by_direction(lifecycle::DirectedResults figures,
                                                           const workloads::DirectionLayout& layout,
                                                           workloads::Side local, std::optional<double> window_end_s) {
  // This side sends forward (client to server) when it is the client.
  const bool sending_forward = local == workloads::Side::client;
  auto take = [&](bool forward) -> lifecycle::SideResults {
    return forward ? std::move(figures.forward) : std::move(*figures.reverse);
  };
  DirectionResults sent, received;
  if (layout.count(sending_forward)) {
    sent = {true, take(sending_forward), layout.connections(sending_forward)};
    if (window_end_s)
      for (stats::StreamFigures& stream : sent.side.streams) stream.end_s = std::max(stream.end_s, *window_end_s);
  }
  if (layout.count(!sending_forward)) received = {true, take(!sending_forward), layout.connections(!sending_forward)};
  return {std::move(sent), std::move(received)};
}

Results results_of(const DirectionResults& sent, const DirectionResults& received, std::size_t connections, bool udp) {
  Results results;
  results.streams.resize(connections);
  stats::CpuTimes cpu;
  double wall_s = 0;
  for (const DirectionResults* direction : {&sent, &received}) {
    if (!direction->present) continue;
    const bool sending = direction == &sent;
    // iperf3 counts from the end of -O: the omitted intervals are left out, as in the summary.
    const std::vector<stats::StreamFigures> kept = stats::excluding_omitted(direction->side.streams, direction->side.intervals);
    for (std::size_t k = 0; k < direction->connections.size(); ++k) {
      const std::uint32_t connection = direction->connections[k];
      const stats::StreamFigures& figures = kept[k];
      StreamResult& stream = results.streams[connection];
      stream.id = stream_id(connection);
      stream.bytes = figures.bytes;
      stream.start_s = figures.start_s;
      stream.end_s = figures.end_s;
      // UDP as iperf3 counts it: a sender its datagrams; a receiver its highest sequence number
      // and the gaps below it.
      stream.packets = figures.udp.datagrams + (sending ? 0 : figures.udp.lost);
      if (!sending) {
        stream.errors = figures.udp.lost;
        stream.jitter_s = figures.udp.jitter_s;
      }
      if (sending && !udp) {
        stats::TcpSummary tcp = stats::tcp_summary(direction->side.intervals, k);
        stream.retransmits = tcp.valid ? tcp.retransmits : -1;
        if (tcp.valid) results.sender_has_retransmits = 1;
      }
    }
    // Both directions ran in one process: its CPU is counted once.
    cpu = direction->side.cpu;
    wall_s = std::max(wall_s, direction->side.wall_s);
    if (results.congestion.empty()) results.congestion = direction->side.congestion;
  }
  stats::CpuUsage usage = stats::cpu_usage(cpu, wall_s, 0);
  results.cpu_total = usage.total_percent;
  results.cpu_user = usage.user_percent;
  results.cpu_system = usage.system_percent;
  if (!sent.present) results.sender_has_retransmits = -1;
  else if (results.sender_has_retransmits != 1) results.sender_has_retransmits = 0;
  return results;
}

std::unique_ptr<workloads::TestSide> make_side(workloads::Side local, const spec::TestSpec& spec,
                                               std::optional<workloads::udp::Wire> udp_wire) {
  if (udp_wire) return workloads::udp::make_side(local, spec, *udp_wire);
  return workloads::bulk::make_side(local, spec, kIperf3Data);
}

}  // namespace testio::iperf3
