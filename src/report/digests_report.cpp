#include "report/digests_report.hpp"

#include <nlohmann/json.hpp>

namespace testio::report {

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
