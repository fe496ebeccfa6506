#include "protocols/iperf3/reports.hpp"

#include "lifecycle/start.hpp"

#include <algorithm>

namespace testio::iperf3 {

report::TestReport direction_report(report::StartInfo start, const DirectionResults& local, bool local_sends,
                                    const Results& peer) {
  report::TestReport report;
  report.start = lifecycle::direction_start(std::move(start), local.connections, local_sends);

  report::SideReport mine;
  mine.present = true;
  mine.totals = local.side.streams;
  mine.intervals = local.side.intervals;
  mine.cpu = local.side.cpu;
  mine.wall_s = local.side.wall_s;
  mine.congestion = local.side.congestion;
  mine.mptcp_subflows = local.side.mptcp_subflows;

  report::SideReport theirs;
  theirs.present = true;
  for (std::uint32_t connection : local.connections) {
    const std::int32_t id = stream_id(connection);
    auto found = std::find_if(peer.streams.begin(), peer.streams.end(),
                              [id](const StreamResult& stream) { return stream.id == id; });
    stats::StreamFigures figures;
    if (found != peer.streams.end()) {
      figures.bytes = found->bytes;
      // UDP: a sending peer's datagrams; a receiving peer's distinct ones, its gaps, its jitter.
      figures.udp.datagrams = local_sends ? found->packets - std::min(found->packets, found->errors) : found->packets;
      if (local_sends) {
        figures.udp.lost = found->errors;
        figures.udp.jitter_s = found->jitter_s;
      }
      figures.start_s = found->start_s;
      figures.end_s = found->end_s > found->start_s ? found->end_s : local.side.wall_s;
      theirs.told_retransmits.push_back(found->retransmits);
    } else {
      figures.failed = true;
      theirs.told_retransmits.push_back(-1);
    }
    theirs.wall_s = std::max(theirs.wall_s, figures.end_s);
    theirs.totals.push_back(figures);
  }
  // iperf3 gives CPU as percent of the test's wall time.
  theirs.cpu.user_s = peer.cpu_user / 100.0 * theirs.wall_s;
  theirs.cpu.system_s = peer.cpu_system / 100.0 * theirs.wall_s;
  theirs.congestion = peer.congestion;

  report.sender = local_sends ? std::move(mine) : std::move(theirs);
  report.receiver = local_sends ? std::move(theirs) : std::move(mine);
  return report;
}

}  // namespace testio::iperf3
