#include "report/raw_report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/units.hpp"

namespace testio::report {
namespace {

void print_event(std::ostream& out, const char* event, nlohmann::ordered_json data) {
  nlohmann::ordered_json line = {{"event", event}, {"data", std::move(data)}};
  out << line.dump() << "\n";
  out.flush();
}

}  // namespace

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
    print_event(out, "raw", std::move(data));
    return;
  }
  char text[512];
  std::snprintf(text, sizeof text, "raw %s %s: %llu bytes in %.3f s, %s, %llu calls, %.0f bytes/call, %s %s%s%s\n",
                transfer.role.c_str(), transfer.peer.c_str(), static_cast<unsigned long long>(transfer.bytes),
                transfer.elapsed_s, util::format_rate(bps, unit).c_str(),
                static_cast<unsigned long long>(transfer.calls), per_call, transfer.hash.c_str(),
                transfer.digest.empty() ? "-" : transfer.digest.c_str(),
                transfer.error.empty() ? "" : ", INCOMPLETE: ", transfer.error.c_str());
  out << text;
  out.flush();
}

void print_raw_interval(std::ostream& out, const RawGroupInterval& interval, config::OutputFormat format, char unit) {
  const double seconds = interval.end_s - interval.start_s;
  const double bps = util::bits_per_second(interval.bytes, seconds);
  if (format != config::OutputFormat::text) {
    print_event(out, "raw_interval",
                {{"peer", interval.peer}, {"start", interval.start_s}, {"end", interval.end_s}, {"seconds", seconds},
                 {"bytes", interval.bytes}, {"bits_per_second", bps}, {"connections", interval.connections}});
    return;
  }
  char text[256];
  std::snprintf(text, sizeof text, "raw interval %s %.2f-%.2f s: %s, %s over %u connections\n", interval.peer.c_str(),
                interval.start_s, interval.end_s, util::format_rate(bps, unit).c_str(),
                util::format_bytes(interval.bytes).c_str(), interval.connections);
  out << text;
  out.flush();
}

void print_raw_sum(std::ostream& out, const RawGroupSum& sum, config::OutputFormat format, char unit) {
  const double bps = util::bits_per_second(sum.bytes, sum.elapsed_s);
  const double per_call = sum.calls ? static_cast<double>(sum.bytes) / static_cast<double>(sum.calls) : 0;
  if (format != config::OutputFormat::text) {
    print_event(out, "raw_sum",
                {{"peer", sum.peer}, {"connections", sum.connections}, {"bytes", sum.bytes},
                 {"seconds", sum.elapsed_s}, {"bits_per_second", bps}, {"calls", sum.calls},
                 {"bytes_per_call", per_call}, {"complete", sum.incomplete == 0},
                 {"incomplete_connections", sum.incomplete}});
    return;
  }
  char text[320];
  std::snprintf(text, sizeof text, "raw sum %s: %u connections, %llu bytes in %.3f s, %s, %llu calls, %.0f bytes/call",
                sum.peer.c_str(), sum.connections, static_cast<unsigned long long>(sum.bytes), sum.elapsed_s,
                util::format_rate(bps, unit).c_str(), static_cast<unsigned long long>(sum.calls), per_call);
  out << text;
  if (sum.incomplete) out << ", INCOMPLETE: " << sum.incomplete << " ended early";
  out << "\n";
  out.flush();
}

}  // namespace testio::report
