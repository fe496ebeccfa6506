// Request/response ("rr"): the client keeps --depth messages of --msize bytes outstanding on each
// connection and times each echo; the server echoes. Reports messages/s and latency percentiles.
// Its options and rules (rr.cpp), its streams and sides (rr_streams.cpp) and its report section
// (rr_section.cpp) share this one header.
#pragma once

#include <cstdint>
#include <memory>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "report/section.hpp"
#include "spec/test_spec.hpp"
#include "stats/histogram.hpp"
#include "workloads/forward.hpp"

namespace testio::workloads::rr {

const Workload& workload();

// Its part of the spec (workloads/part.hpp).
struct RrSpec {
  std::uint64_t message_size = 1024;  // --msize: bytes per request and per echo
  std::uint32_t depth = 1;            // --depth: requests outstanding per connection
  std::uint64_t messages = 0;         // --num: requests per connection; 0 = for -t seconds

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("msize", part.message_size);
    visit("depth", part.depth);
    visit("messages", part.messages);
  }
};

// Its options group (rr.cpp): --rr and what it sends.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);
// What ends a test of it (empty: -t), in the report's words: the Workload's extent and the sides'
// start line say the same.
std::string rr_extent(const RrSpec& rr);

// The client's side alone, for --raw --rr against any plain echo server (rr_streams.cpp).
std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec);
// The server's side: an echo on each connection (rr_streams.cpp).
std::unique_ptr<TestSide> echo_side(const spec::TestSpec& spec);

// What "rr" and --rr's report says (rr_section.cpp): messages completed and their round-trip
// latency, in text, JSON (end.testio.rr), metrics, and a raw echo's own line.
struct RrSummary {
  std::uint64_t message_size = 0;
  std::uint32_t depth = 1;
  std::uint64_t messages = 0;
  double seconds = 0;
  double messages_per_second = 0;
  stats::LatencySummary latency;
};

RrSummary summarize_rr(const stats::LatencyHistogram& latencies, std::uint64_t message_size, std::uint32_t depth,
                       double seconds);

class RrSection final : public report::Section {
 public:
  explicit RrSection(RrSummary summary) : summary_(summary) {}
  const RrSummary& summary() const noexcept { return summary_; }

  std::string key() const override { return "rr"; }
  // "rr: 100000 messages of 1 KiB, depth 1, in 10.00 s: 9876 messages/s; latency us p50 ... max ..."
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;
  // --rr --raw: one line of text or one JSON line, as a raw echo's figures.
  bool print_alone(std::ostream& out, const std::string& peer, config::OutputFormat format) const override;

 private:
  RrSummary summary_;
};

}  // namespace testio::workloads::rr
