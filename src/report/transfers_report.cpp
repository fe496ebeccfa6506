#include "report/transfers_report.hpp"

#include <cstdio>

#include "report/rr_report.hpp"
#include "util/units.hpp"

namespace testio::report {

std::string transfers_text(const TransfersSummary& transfers, char unit) {
  char line[400];
  std::snprintf(line, sizeof line,
                "transfers: %llu of %llu x %s done, %u at a time on %s connections, in %.2f s: %.1f transfers/s, %s\n",
                static_cast<unsigned long long>(transfers.completed),
                static_cast<unsigned long long>(transfers.requested), util::format_size(transfers.size).c_str(),
                transfers.concurrency, transfers.reuse ? "kept" : "fresh", transfers.seconds,
                transfers.transfers_per_second, util::format_rate(transfers.bits_per_second, unit).c_str());
  std::string text = line;
  text += "  " + latency_text("connect", transfers.connect, 1e3, "us") + "\n";
  text += "  " + latency_text("transfer", transfers.transfer, 1e6, "ms") + "\n";
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
                                 {"transfer_ms", latency_json(transfers.transfer, 1e6)},
                                 {"connections_opened", transfers.connect.count},
                                 {"partial_files_removed", transfers.partial_files_removed}};
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
