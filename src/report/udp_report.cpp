#include "report/udp_report.hpp"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "report/format.hpp"
#include "util/units.hpp"

namespace testio::report {
namespace {

using json = nlohmann::ordered_json;

constexpr double kRateShortfall = 0.95;  // sent below this share of the asked rate is said

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

json loss_json(const FlowLoss& flow) {
  return {{"jitter_ms", flow.jitter_ms}, {"lost_packets", flow.lost}, {"packets", flow.expected()},
          {"lost_percent", flow.lost_percent()}};
}

void add_loss(json& entry, const FlowLoss& flow) {
  const json loss = loss_json(flow);  // named: items() of a temporary would outlive it
  for (const auto& [key, value] : loss.items()) entry[key] = value;
}

json fast_paths_json(const UdpSummary& udp) {
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
std::string shortfall(const TestReport& report, const stats::SideSummary& sent) {
  const double asked = report.udp.rate_bps * report.start.connections();
  if (asked <= 0 || !report.sender.present || sent.bits_per_second >= kRateShortfall * asked) return {};
  return printf_text("the senders reached %s of the %s asked", util::format_rate(sent.bits_per_second, 'a').c_str(),
                     util::format_rate(asked, 'a').c_str());
}

// The receivers' one-way delays, where this side knows how the two clocks relate (the client's
// report): each percentile the worst flow's.
std::optional<stats::DelayFigures> worst_delay(const TestReport& report, const std::vector<stats::StreamFigures>& received) {
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

json delay_json(const stats::DelayFigures& delay) {
  return {{"p50", static_cast<double>(delay.p50_ns) / 1e3}, {"p90", static_cast<double>(delay.p90_ns) / 1e3},
          {"p99", static_cast<double>(delay.p99_ns) / 1e3}, {"max", static_cast<double>(delay.max_ns) / 1e3}};
}

json testio_udp_json(const TestReport& report, const FlowLoss& sum, const std::vector<stats::StreamFigures>& sent,
                     const std::vector<stats::StreamFigures>& received) {
  const UdpSummary& udp = report.udp;
  json out = {{"datagram_size", udp.datagram},
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
    json one_way = delay_json(*delay);
    one_way["clock"] = report.start.peer_clock.name();
    one_way["error_bound_us"] = static_cast<double>(report.start.peer_clock.error_bound_ns) / 1e3;
    out["one_way_delay_us"] = std::move(one_way);
  }
  const std::string short_of = shortfall(report, stats::summarize(sent));
  out["rate_reached"] = short_of.empty();
  if (!short_of.empty()) out["rate_shortfall"] = short_of;
  if (udp.host_counted)
    out["host_udp_counters_delta"] = {{"in_datagrams", udp.host.in_datagrams}, {"in_errors", udp.host.in_errors},
                                      {"rcvbuf_errors_drops", udp.host.rcvbuf_errors},
                                      {"sndbuf_errors_drops", udp.host.sndbuf_errors}, {"no_ports", udp.host.no_ports}};
  return out;
}

}  // namespace

json udp_stream_json(const stats::DatagramTally& tally) {
  return {{"datagrams", tally.datagrams},     {"lost", tally.lost},     {"out_of_order", tally.out_of_order},
          {"duplicates", tally.duplicates},   {"socket_drops", tally.socket_drops}, {"strays", tally.strays},
          {"jitter_ms", tally.jitter_s * 1e3}};
}

double FlowLoss::lost_percent() const noexcept { return percent(lost, expected()); }

std::vector<FlowLoss> flow_losses(const std::vector<stats::StreamFigures>& sent,
                                  const std::vector<stats::StreamFigures>& received) {
  std::vector<FlowLoss> flows(std::max(sent.size(), received.size()));
  for (std::size_t i = 0; i < flows.size(); ++i) {
    FlowLoss& flow = flows[i];
    if (i < sent.size()) flow.sent = sent[i].udp.datagrams;
    if (i >= received.size()) continue;
    const stats::DatagramTally& got = received[i].udp;
    flow.received = got.datagrams;
    flow.lost = i < sent.size() ? flow.sent - std::min(flow.sent, got.datagrams) : got.lost;
    flow.out_of_order = got.out_of_order;
    flow.duplicates = got.duplicates;
    flow.socket_drops = got.socket_drops;
    flow.strays = got.strays;
    flow.jitter_ms = got.jitter_s * 1e3;
  }
  return flows;
}

FlowLoss sum_of(const std::vector<FlowLoss>& flows) {
  FlowLoss sum;
  for (const FlowLoss& flow : flows) {
    sum.sent += flow.sent;
    sum.received += flow.received;
    sum.lost += flow.lost;
    sum.out_of_order += flow.out_of_order;
    sum.duplicates += flow.duplicates;
    sum.socket_drops += flow.socket_drops;
    sum.strays += flow.strays;
    sum.jitter_ms += flow.jitter_ms / static_cast<double>(flows.size());
  }
  return sum;
}

void add_udp_interval_json(json& entry, const stats::DatagramTally& tally, bool sender) {
  if (sender) {
    entry["packets"] = tally.datagrams;
    return;
  }
  FlowLoss flow;
  flow.received = tally.datagrams;
  flow.lost = tally.lost;
  flow.jitter_ms = tally.jitter_s * 1e3;
  add_loss(entry, flow);
}

void add_udp_end_json(json& end, const TestReport& report) {
  const std::vector<stats::StreamFigures> sent = summary_figures(report.sender);
  const std::vector<stats::StreamFigures> received = summary_figures(report.receiver);
  const std::vector<FlowLoss> flows = flow_losses(sent, received);
  const FlowLoss sum = sum_of(flows);
  // iperf3's one object per stream: the sender's bytes and time, the receiver's loss and jitter.
  for (std::size_t i = 0; i < flows.size() && i < end["streams"].size(); ++i) {
    json& stream = end["streams"][i];
    json udp = stream.contains("sender") ? stream["sender"] : stream["receiver"];
    udp.erase("testio");
    add_loss(udp, flows[i]);
    udp["out_of_order"] = flows[i].out_of_order;
    udp["sender"] = report.start.local_is_sender;
    if (report.start.peer_clock.known() && i < received.size() && received[i].delay.any())
      udp["testio"] = {{"one_way_delay_us", delay_json(received[i].delay)}};
    stream["udp"] = std::move(udp);
  }
  json total = report.start.local_is_sender ? end["sum_sent"] : end["sum_received"];
  add_loss(total, sum);
  total["sender"] = report.start.local_is_sender;
  end["sum"] = std::move(total);
  FlowLoss sent_only;
  sent_only.sent = sum.sent;
  add_loss(end["sum_sent"], sent_only);
  add_loss(end["sum_received"], sum);
  end["testio"]["udp"] = testio_udp_json(report, sum, sent, received);
}

std::string udp_interval_text(const stats::DatagramTally& tally, bool sender) {
  if (sender) return printf_text("  %llu datagrams", static_cast<unsigned long long>(tally.datagrams));
  const std::uint64_t expected = tally.datagrams + tally.lost;
  std::string text = printf_text("  lost %llu/%llu (%.2g%%), jitter %.3f ms", static_cast<unsigned long long>(tally.lost),
                                 static_cast<unsigned long long>(expected), percent(tally.lost, expected),
                                 tally.jitter_s * 1e3);
  if (tally.socket_drops) text += printf_text(", socket drops %llu", static_cast<unsigned long long>(tally.socket_drops));
  return text;
}

std::string udp_text(const TestReport& report) {
  const std::vector<stats::StreamFigures> sent = summary_figures(report.sender);
  const std::vector<stats::StreamFigures> received = summary_figures(report.receiver);
  const FlowLoss sum = sum_of(flow_losses(sent, received));
  const UdpSummary& udp = report.udp;
  std::string lines = printf_text(
      "udp: %llu B datagrams: sent %llu, received %llu, lost %llu (%.3g%%), of them dropped by the receiving socket "
      "%llu; out of order %llu, duplicates %llu, jitter %.3f ms\n",
      static_cast<unsigned long long>(udp.datagram), static_cast<unsigned long long>(sum.sent),
      static_cast<unsigned long long>(sum.received), static_cast<unsigned long long>(sum.lost), sum.lost_percent(),
      static_cast<unsigned long long>(sum.socket_drops), static_cast<unsigned long long>(sum.out_of_order),
      static_cast<unsigned long long>(sum.duplicates), sum.jitter_ms);
  const json paths = fast_paths_json(udp);
  lines += printf_text("udp: GSO %s, GRO %s, batch %u, %s; datagrams per call: sender %.1f, receiver %.1f\n",
                       paths["gso"].get<bool>() ? "on" : "off", paths["gro"].get<bool>() ? "on" : "off",
                       udp.asked.batch, udp.asked.connected ? "connected" : "unconnected", per_call(sent),
                       per_call(received));
  if (sum.strays) lines += printf_text("udp: %llu stray datagrams ignored\n", static_cast<unsigned long long>(sum.strays));
  if (std::optional<stats::DelayFigures> delay = worst_delay(report, received))
    lines += printf_text("udp: one-way delay, the worst flow's (clock %s, within %.0f us): p50 %.1f, p90 %.1f, p99 %.1f, "
                         "max %.1f us\n",
                         report.start.peer_clock.name(), static_cast<double>(report.start.peer_clock.error_bound_ns) / 1e3,
                         static_cast<double>(delay->p50_ns) / 1e3, static_cast<double>(delay->p90_ns) / 1e3,
                         static_cast<double>(delay->p99_ns) / 1e3, static_cast<double>(delay->max_ns) / 1e3);
  if (udp.host_counted)
    lines += printf_text("udp: this host's counters moved by InDatagrams %llu, InErrors %llu, RcvbufErrors %llu, "
                         "SndbufErrors %llu\n",
                         static_cast<unsigned long long>(udp.host.in_datagrams),
                         static_cast<unsigned long long>(udp.host.in_errors),
                         static_cast<unsigned long long>(udp.host.rcvbuf_errors),
                         static_cast<unsigned long long>(udp.host.sndbuf_errors));
  if (std::string short_of = shortfall(report, stats::summarize(sent)); !short_of.empty())
    lines += "udp: " + short_of + "\n";
  return lines;
}

}  // namespace testio::report
