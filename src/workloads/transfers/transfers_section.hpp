// Downloads' part of a report (--transfers from a testio server, and HTTP's): how many, how fast,
// how long each took, in text, JSON (end.testio.transfers) and metrics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/section.hpp"

namespace testio::workloads::transfers {

// The downloads as the client saw them.
struct TransfersSummary {
  std::uint64_t requested = 0;
  std::uint64_t completed = 0;
  std::uint64_t failed = 0;
  std::uint64_t size = 0;
  std::uint32_t concurrency = 0;
  bool reuse = false;
  std::string saved_to;                 // --save directory; empty when discarded
  std::uint64_t partial_files_removed = 0;
  double seconds = 0;                   // from the start to the last transfer's end
  double transfers_per_second = 0;
  double bits_per_second = 0;           // completed transfers' bytes over `seconds`
  stats::LatencySummary connect;        // the kernel's handshake RTT, per connection opened
  stats::LatencySummary connect_seen;   // connect() to the client noticing it: connect plus its own queueing
  stats::LatencySummary transfer;       // connect (or request) to the last byte, per transfer
  std::string first_error;
  // HTTP downloads (-c URL): what HTTP adds. `size` is then the mean body of a completed transfer.
  bool http = false;
  std::string url;                      // the URL as given (with {i}), or "N URLs" (--urls)
  std::uint64_t bytes = 0;              // the completed transfers' bodies
  stats::LatencySummary first_byte;     // the request sent to the answer's first byte, as seen
  stats::LatencySummary loop_turn;      // one turn of a worker's loop: the most an event waited there
  std::vector<std::pair<long, std::uint64_t>> statuses;  // HTTP status and how many answers had it
};

class TransfersSection final : public report::Section {
 public:
  explicit TransfersSection(TransfersSummary summary) : summary_(std::move(summary)) {}
  const TransfersSummary& summary() const noexcept { return summary_; }

  std::string key() const override { return "transfers"; }
  // "transfers: 1000 of 1000 x 6 MiB ... 101.3/s, 4.86 Gbit/s" and the connect/transfer percentiles.
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;
  bool has_own_goodput() const override { return true; }
  std::string failure() const override;

 private:
  TransfersSummary summary_;
};

}  // namespace testio::workloads::transfers
