#include "report/transfers_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "report/rr_report.hpp"
#include "util/units.hpp"

namespace testio::report {

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

std::string transfers_text(const TransfersSummary& transfers, char unit) {
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
  text += "  " + latency_text("connect (the kernel's handshake RTT)", transfers.connect, 1e3, "us") + "\n";
  text += "  " + latency_text("connect as this side saw it (its queueing included)", transfers.connect_seen, 1e3, "us") +
          "\n";
  if (transfers.http) text += "  " + latency_text("first byte", transfers.first_byte, 1e3, "us") + "\n";
  text += "  " + latency_text("transfer", transfers.transfer, 1e6, "ms") + "\n";
  if (transfers.http) {
    text += "  " + latency_text("loop turn (the most an event waited on this side)", transfers.loop_turn, 1e3, "us") +
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

nlohmann::ordered_json transfers_json(const TransfersSummary& transfers) {
  nlohmann::ordered_json data = {{"requested", transfers.requested},
                                 {"completed", transfers.completed},
                                 {"failed", transfers.failed},
                                 {"size", transfers.size},
                                 {"concurrency", transfers.concurrency},
                                 {"reuse", transfers.reuse},
                                 {"seconds", transfers.seconds},
                                 {"transfers_per_second", transfers.transfers_per_second},
                                 {"bits_per_second", transfers.bits_per_second},
                                 {"connect_us", latency_json(transfers.connect, 1e3)},
                                 {"connect_seen_us", latency_json(transfers.connect_seen, 1e3)},
                                 {"transfer_ms", latency_json(transfers.transfer, 1e6)},
                                 {"connections_opened", transfers.connect_seen.count},
                                 {"partial_files_removed", transfers.partial_files_removed}};
  if (transfers.http) {
    nlohmann::ordered_json statuses = nlohmann::ordered_json::object();
    for (const auto& [status, count] : transfers.statuses) statuses[std::to_string(status)] = count;
    data["http"] = {{"url", transfers.url},
                    {"bytes", transfers.bytes},
                    {"first_byte_us", latency_json(transfers.first_byte, 1e3)},
                    {"loop_turn_us", latency_json(transfers.loop_turn, 1e3)},
                    {"status_codes", statuses}};
  }
  if (!transfers.saved_to.empty()) data["saved_to"] = transfers.saved_to;
  if (!transfers.first_error.empty()) data["first_error"] = transfers.first_error;
  return data;
}

std::string digests_text(const DigestCheck& digests) {
  std::string text;
  for (std::size_t i = 0; i < digests.sent.size(); ++i) {
    if (digests.received.empty()) {  // a plain receiver (--raw) prints its own
      text += digests.hash + " connection " + std::to_string(i + 1) + ": " + digests.sent[i] + " sent\n";
      continue;
    }
    const std::string received = i < digests.received.size() ? digests.received[i] : "(none)";
    text += digests.hash + " connection " + std::to_string(i + 1) + ": " + digests.sent[i] + " sent, " + received +
            " received: " + (digests.sent[i] == received ? "match" : "MISMATCH") + "\n";
  }
  return text;
}

nlohmann::ordered_json digests_json(const DigestCheck& digests) {
  // A plain receiver (--raw) gives no digests: nothing to compare, so no verdict.
  const nlohmann::ordered_json match = digests.received.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(digests.matches());
  return {{"hash", digests.hash}, {"sent", digests.sent}, {"received", digests.received}, {"match", match}};
}

}  // namespace testio::report
