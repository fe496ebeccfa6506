#include "report/udp_report.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "report/format.hpp"
#include "util/units.hpp"

namespace testio::report {
namespace {

using json = nlohmann::ordered_json;

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

}  // namespace

json one_way_delay_json(const stats::DelayFigures& delay) {
  return {{"p50", static_cast<double>(delay.p50_ns) / 1e3}, {"p90", static_cast<double>(delay.p90_ns) / 1e3},
          {"p99", static_cast<double>(delay.p99_ns) / 1e3}, {"max", static_cast<double>(delay.max_ns) / 1e3}};
}

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
  entry["testio"]["socket_drops"] = tally.socket_drops;  // the receiving sockets' own, in this interval
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
      udp["testio"] = {{"one_way_delay_us", one_way_delay_json(received[i].delay)}};
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

}  // namespace testio::report
