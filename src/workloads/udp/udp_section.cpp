// The UDP workload's own part of a report (end.testio.udp and the "udp:" lines): what the flows were
// asked to do and how this side ran them (fast paths the kernel refused, the host's UDP counters),
// and the loss summed up from the direction's flows, with where it happened. iperf3's -u keys and
// the interval columns come from the flows' figures (report/udp_report.*).
#include "workloads/udp/udp.hpp"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "net/udp_counters.hpp"
#include "report/format.hpp"
#include "report/section.hpp"
#include "report/test_report.hpp"
#include "report/udp_report.hpp"
#include "util/units.hpp"

namespace testio::workloads::udp {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kRateShortfall = 0.95;  // sent below this share of the asked rate is said

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

Json fast_paths_json(const UdpSummary& udp) {
  auto in_use = [&](bool asked, const char* name) {
    return asked && std::find(udp.fallbacks.begin(), udp.fallbacks.end(), name) == udp.fallbacks.end();
  };
  return {{"gso", in_use(udp.asked.gso, "gso")}, {"gro", in_use(udp.asked.gro, "gro")},
          {"batch", udp.asked.batch}, {"connected", udp.asked.connected}, {"refused", udp.fallbacks}};
}

double per_call(const std::vector<stats::StreamFigures>& streams) {
  std::uint64_t datagrams = 0, calls = 0;
  for (const stats::StreamFigures& stream : streams) {
    datagrams += stream.udp.datagrams;
    calls += stream.calls;
  }
  return calls ? static_cast<double>(datagrams) / static_cast<double>(calls) : 0.0;
}

// The senders' rate below what was asked: the host (or the sender's path) could not keep it.
std::string shortfall(const report::TestReport& report, double rate_bps, const stats::SideSummary& sent) {
  const double asked = rate_bps * report.start.connections();
  if (asked <= 0 || !report.sender.present || sent.bits_per_second >= kRateShortfall * asked) return {};
  return report::printf_text("the senders reached %s of the %s asked", util::format_rate(sent.bits_per_second, 'a').c_str(),
                     util::format_rate(asked, 'a').c_str());
}

// The receivers' one-way delays, where this side knows how the two clocks relate (the client's
// report): each percentile the worst flow's.
std::optional<stats::DelayFigures> worst_delay(const report::TestReport& report, const std::vector<stats::StreamFigures>& received) {
  if (!report.start.peer_clock.known()) return std::nullopt;
  stats::DelayFigures worst;
  for (const stats::StreamFigures& stream : received) {
    worst.p50_ns = std::max(worst.p50_ns, stream.delay.p50_ns);
    worst.p90_ns = std::max(worst.p90_ns, stream.delay.p90_ns);
    worst.p99_ns = std::max(worst.p99_ns, stream.delay.p99_ns);
    worst.max_ns = std::max(worst.max_ns, stream.delay.max_ns);
  }
  if (!worst.any()) return std::nullopt;
  return worst;
}

class UdpSection final : public report::Section {
 public:
  explicit UdpSection(UdpSummary summary) : summary_(std::move(summary)) {}
  std::string key() const override { return "udp"; }
  std::string text(const report::TestReport& report, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport& report) const override;
  // Its figures per direction (loss, jitter) are every datagram test's: metrics/test_metrics.cpp.
  void metrics(report::MetricSink&) const override {}

 private:
  UdpSummary summary_;
};

nlohmann::ordered_json UdpSection::json(const report::TestReport& report) const {
  const std::vector<stats::StreamFigures> sent = report::summary_figures(report.sender);
  const std::vector<stats::StreamFigures> received = report::summary_figures(report.receiver);
  const report::FlowLoss sum = report::sum_of(report::flow_losses(sent, received));
  const UdpSummary& udp = summary_;
  Json out = {{"datagram_size", udp.datagram},
              {"rate_bps_per_flow", udp.rate_bps},
              {"fast_paths", fast_paths_json(udp)},
              {"sent_datagrams", sum.sent},
              {"received_datagrams", sum.received},
              {"lost_datagrams", sum.lost},
              {"receiver_socket_drops", sum.socket_drops},
              {"receiver_socket_drop_percent", percent(sum.socket_drops, sum.expected())},
              {"lost_elsewhere", sum.lost - std::min(sum.lost, sum.socket_drops)},
              {"out_of_order", sum.out_of_order},
              {"duplicates", sum.duplicates},
              {"strays", sum.strays},
              {"sender_datagrams_per_call", per_call(sent)},
              {"receiver_datagrams_per_call", per_call(received)}};
  if (std::optional<stats::DelayFigures> delay = worst_delay(report, received)) {
    Json one_way = report::one_way_delay_json(*delay);
    one_way["clock"] = report.start.peer_clock.name();
    one_way["error_bound_us"] = static_cast<double>(report.start.peer_clock.error_bound_ns) / 1e3;
    out["one_way_delay_us"] = std::move(one_way);
  }
  const std::string short_of = shortfall(report, udp.rate_bps, stats::summarize(sent));
  out["rate_reached"] = short_of.empty();
  if (!short_of.empty()) out["rate_shortfall"] = short_of;
  if (udp.host_counted)
    out["host_udp_counters_delta"] = {{"in_datagrams", udp.host.in_datagrams}, {"in_errors", udp.host.in_errors},
                                      {"rcvbuf_errors_drops", udp.host.rcvbuf_errors},
                                      {"sndbuf_errors_drops", udp.host.sndbuf_errors}, {"no_ports", udp.host.no_ports}};
  return out;
}


std::string UdpSection::text(const report::TestReport& report, char) const {
  const std::vector<stats::StreamFigures> sent = report::summary_figures(report.sender);
  const std::vector<stats::StreamFigures> received = report::summary_figures(report.receiver);
  const report::FlowLoss sum = report::sum_of(report::flow_losses(sent, received));
  const UdpSummary& udp = summary_;
  std::string lines = report::printf_text(
      "udp: %llu B datagrams: sent %llu, received %llu, lost %llu (%.3g%%), of them dropped by the receiving socket "
      "%llu; out of order %llu, duplicates %llu, jitter %.3f ms\n",
      static_cast<unsigned long long>(udp.datagram), static_cast<unsigned long long>(sum.sent),
      static_cast<unsigned long long>(sum.received), static_cast<unsigned long long>(sum.lost), sum.lost_percent(),
      static_cast<unsigned long long>(sum.socket_drops), static_cast<unsigned long long>(sum.out_of_order),
      static_cast<unsigned long long>(sum.duplicates), sum.jitter_ms);
  const Json paths = fast_paths_json(udp);
  lines += report::printf_text("udp: GSO %s, GRO %s, batch %u, %s; datagrams per call: sender %.1f, receiver %.1f\n",
                       paths["gso"].get<bool>() ? "on" : "off", paths["gro"].get<bool>() ? "on" : "off",
                       udp.asked.batch, udp.asked.connected ? "connected" : "unconnected", per_call(sent),
                       per_call(received));
  if (sum.strays) lines += report::printf_text("udp: %llu stray datagrams ignored\n", static_cast<unsigned long long>(sum.strays));
  if (std::optional<stats::DelayFigures> delay = worst_delay(report, received))
    lines += report::printf_text("udp: one-way delay, the worst flow's (clock %s, within %.0f us): p50 %.1f, p90 %.1f, p99 %.1f, "
                         "max %.1f us\n",
                         report.start.peer_clock.name(), static_cast<double>(report.start.peer_clock.error_bound_ns) / 1e3,
                         static_cast<double>(delay->p50_ns) / 1e3, static_cast<double>(delay->p90_ns) / 1e3,
                         static_cast<double>(delay->p99_ns) / 1e3, static_cast<double>(delay->max_ns) / 1e3);
  if (udp.host_counted)
    lines += report::printf_text("udp: this host's counters moved by InDatagrams %llu, InErrors %llu, RcvbufErrors %llu, "
                         "SndbufErrors %llu\n",
                         static_cast<unsigned long long>(udp.host.in_datagrams),
                         static_cast<unsigned long long>(udp.host.in_errors),
                         static_cast<unsigned long long>(udp.host.rcvbuf_errors),
                         static_cast<unsigned long long>(udp.host.sndbuf_errors));
  if (std::string short_of = shortfall(report, udp.rate_bps, stats::summarize(sent)); !short_of.empty())
    lines += "udp: " + short_of + "\n";
  return lines;
}

}  // namespace

std::shared_ptr<const report::Section> make_section(UdpSummary summary) {
  return std::make_shared<const UdpSection>(std::move(summary));
}

}  // namespace testio::workloads::udp
