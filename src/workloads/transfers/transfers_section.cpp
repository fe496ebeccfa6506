// Downloads' part of a report (--transfers from a testio server, and HTTP's): how many, how fast,
// how long each took, in text, JSON (end.testio.transfers) and metrics.
#include "workloads/transfers/transfers.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "report/latency_report.hpp"
#include "util/units.hpp"

namespace testio::workloads::transfers {

namespace {

std::string statuses_text(const TransfersSummary& transfers) {
  std::string text = "  HTTP status:";
  for (const auto& [status, count] : transfers.statuses) {
    char part[48];
    std::snprintf(part, sizeof part, " %ld x %llu", status, static_cast<unsigned long long>(count));
    text += part;
  }
  text += '\n';
  return text;
}

}  // namespace

std::string TransfersSection::text(const report::TestReport&, char unit) const {
  const TransfersSummary& transfers = summary_;
  std::string each = transfers.http ? util::format_bytes(transfers.bytes) : util::format_size(transfers.size);
  each.insert(0, transfers.http ? "" : "x ");
  if (transfers.http) each.append(" in all");
  char line[400];
  std::snprintf(line, sizeof line,
                "transfers: %llu of %llu %s done, %u at a time on %s connections, in %.2f s: %.1f transfers/s, %s\n",
                static_cast<unsigned long long>(transfers.completed),
                static_cast<unsigned long long>(transfers.requested), each.c_str(), transfers.concurrency,
                transfers.reuse ? "kept" : "fresh", transfers.seconds, transfers.transfers_per_second,
                util::format_rate(transfers.bits_per_second, unit).c_str());
  std::string text = line;
  if (transfers.http) text += "  from " + transfers.url + "\n";
  text += "  " + report::latency_text("connect (the kernel's handshake RTT)", transfers.connect, 1e3, "us") + "\n";
  text += "  " + report::latency_text("connect as this side saw it (its queueing included)", transfers.connect_seen, 1e3, "us") +
          "\n";
  if (transfers.http) text += "  " + report::latency_text("first byte", transfers.first_byte, 1e3, "us") + "\n";
  text += "  " + report::latency_text("transfer", transfers.transfer, 1e6, "ms") + "\n";
  if (transfers.http) {
    text += "  " + report::latency_text("loop turn (the most an event waited on this side)", transfers.loop_turn, 1e3, "us") +
            "\n";
    if (!transfers.statuses.empty()) text += statuses_text(transfers);
  }
  if (!transfers.saved_to.empty()) text += "  saved to " + transfers.saved_to + "\n";
  if (transfers.failed) text += "  " + std::to_string(transfers.failed) + " failed; first: " + transfers.first_error + "\n";
  if (transfers.partial_files_removed)
    text += "  removed " + std::to_string(transfers.partial_files_removed) + " partially written file" +
            (transfers.partial_files_removed > 1 ? "s" : "") + "\n";
  return text;
}

nlohmann::ordered_json TransfersSection::json(const report::TestReport&) const {
  const TransfersSummary& transfers = summary_;
  nlohmann::ordered_json data = {{"requested", transfers.requested},
                                 {"completed", transfers.completed},
                                 {"failed", transfers.failed},
                                 {"size", transfers.size},
                                 {"concurrency", transfers.concurrency},
                                 {"reuse", transfers.reuse},
                                 {"seconds", transfers.seconds},
                                 {"transfers_per_second", transfers.transfers_per_second},
                                 {"bits_per_second", transfers.bits_per_second},
                                 {"connect_us", report::latency_json(transfers.connect, 1e3)},
                                 {"connect_seen_us", report::latency_json(transfers.connect_seen, 1e3)},
                                 {"transfer_ms", report::latency_json(transfers.transfer, 1e6)},
                                 {"connections_opened", transfers.connect_seen.count},
                                 {"partial_files_removed", transfers.partial_files_removed}};
  if (transfers.http) {
    nlohmann::ordered_json statuses = nlohmann::ordered_json::object();
    for (const auto& [status, count] : transfers.statuses) statuses[std::to_string(status)] = count;
    data["http"] = {{"url", transfers.url},
                    {"bytes", transfers.bytes},
                    {"first_byte_us", report::latency_json(transfers.first_byte, 1e3)},
                    {"loop_turn_us", report::latency_json(transfers.loop_turn, 1e3)},
                    {"status_codes", statuses}};
  }
  if (!transfers.saved_to.empty()) data["saved_to"] = transfers.saved_to;
  if (!transfers.first_error.empty()) data["first_error"] = transfers.first_error;
  return data;
}

void TransfersSection::metrics(report::MetricSink& sink) const {
  const TransfersSummary& transfers = summary_;
  // Downloads: the server sent, the client counted.
  sink.gauge("testio_goodput_bytes_per_second", "Goodput the receiver counted over the test",
             {{{{"direction", "reverse"}}, transfers.bits_per_second / 8}});
  sink.gauge("testio_transfers", "Transfers that completed and that failed",
             {{{{"result", "completed"}}, static_cast<double>(transfers.completed)},
              {{{"result", "failed"}}, static_cast<double>(transfers.failed)}});
  sink.gauge("testio_transfers_per_second", "Completed transfers per second", {{{}, transfers.transfers_per_second}});
  sink.latency("testio_transfer_duration_seconds", "Connect (or request) to last byte, per transfer", transfers.transfer);
  sink.latency("testio_transfer_connect_seconds", "The kernel's handshake round trip, per connection opened",
               transfers.connect);
  if (!transfers.http) return;
  sink.latency("testio_http_first_byte_seconds", "Request sent to the answer's first byte", transfers.first_byte);
  std::vector<std::pair<report::MetricLabels, double>> statuses;
  for (const auto& [code, count] : transfers.statuses)
    statuses.push_back({{{"code", std::to_string(code)}}, static_cast<double>(count)});
  sink.gauge("testio_http_responses", "Answers by HTTP status code", statuses);
}

std::string TransfersSection::failure() const {
  const TransfersSummary& transfers = summary_;
  if (!transfers.failed) return {};
  return std::to_string(transfers.failed) + " of " + std::to_string(transfers.requested) + " transfers failed" +
         (transfers.first_error.empty() ? "" : "; the first: " + transfers.first_error);
}

}  // namespace testio::workloads::transfers
