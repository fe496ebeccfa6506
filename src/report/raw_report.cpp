#include "report/raw_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/units.hpp"

namespace testio::report {

void print_raw_transfer(std::ostream& out, const RawTransfer& transfer, config::OutputFormat format, char unit) {
  double bps = util::bits_per_second(transfer.bytes, transfer.elapsed_s);
  double per_call = transfer.calls ? static_cast<double>(transfer.bytes) / static_cast<double>(transfer.calls) : 0;
  if (format != config::OutputFormat::text) {
    nlohmann::ordered_json data = {
        {"role", transfer.role},       {"peer", transfer.peer},         {"bytes", transfer.bytes},
        {"seconds", transfer.elapsed_s}, {"bits_per_second", bps},      {"calls", transfer.calls},
        {"bytes_per_call", per_call},  {"hash", transfer.hash},         {"digest", transfer.digest},
        {"complete", transfer.error.empty()}};
    if (!transfer.error.empty()) data["error"] = transfer.error;
    nlohmann::ordered_json line = {{"event", "raw"}, {"data", std::move(data)}};
    out << line.dump() << "\n";
  } else {
    char text[512];
    std::snprintf(text, sizeof text, "raw %s %s: %llu bytes in %.3f s, %s, %llu calls, %.0f bytes/call, %s %s%s%s\n",
                  transfer.role.c_str(), transfer.peer.c_str(), static_cast<unsigned long long>(transfer.bytes),
                  transfer.elapsed_s, util::format_rate(bps, unit).c_str(),
                  static_cast<unsigned long long>(transfer.calls), per_call, transfer.hash.c_str(),
                  transfer.digest.empty() ? "-" : transfer.digest.c_str(),
                  transfer.error.empty() ? "" : ", INCOMPLETE: ", transfer.error.c_str());
    out << text;
  }
  out.flush();
}

}  // namespace testio::report
