// iperf3-shaped JSON: one document at the end (--json) or one line per event (--json-stream).
// iperf3's field names are kept as they are; testio's own figures sit beside them under "testio".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/reporter.hpp"

namespace testio::report {

// Keys in insertion order, as iperf3 prints them (start, intervals, end), not sorted.
using Json = nlohmann::ordered_json;

// The pieces, shared by both reporters and tested on their own (start_json in json_start.cpp).
Json start_json(const StartInfo& start);
// `last_retransmits` carries each stream's cumulative retransmits between calls; `udp`: a -u
// test's interval, with iperf3's datagram keys.
Json interval_json(const stats::IntervalRecord& record, bool sender, std::vector<std::uint32_t>& last_retransmits,
                   bool udp = false);
Json end_json(const TestReport& report);

class JsonReporter final : public Reporter {
 public:
  // options.test: a server's number for the test, carried by each event and the document (0:
  // none); --title and --extra-data go in the document, at its top as iperf3 puts them.
  JsonReporter(std::ostream& out, bool stream_events, const ReporterOptions& options = {});
  ~JsonReporter() override;
  JsonReporter(const JsonReporter&) = delete;
  JsonReporter& operator=(const JsonReporter&) = delete;
  void start(const StartInfo& start) override;
  void interval(const stats::IntervalRecord& record) override;
  // --json-stream: a "with_interval" event, {"workload": N, "interval": {...}}.
  void with_interval(std::size_t workload, const StartInfo& start, const stats::IntervalRecord& record) override;
  void end(const TestReport& report) override;
  void error(const std::string& message) override;

 private:
  void emit(const char* event, Json data);
  // {"test" (a server's), "start", "intervals", "end"}, the last three empty.
  Json new_document() const;

  std::ostream& out_;
  bool stream_events_;
  std::uint64_t test_;
  std::string title_, extra_data_;
  bool server_output_ = false, full_document_ = false;
  bool local_is_sender_ = true;
  bool udp_ = false;
  std::map<std::size_t, std::vector<std::uint32_t>> with_retransmits_;  // each other workload's
  double interval_s_ = 0;
  std::unique_ptr<Json> document_;  // being built (a null value between tests); a pointer keeps json.hpp out
  std::vector<std::uint32_t> last_retransmits_;
};

}  // namespace testio::report
