// Responsiveness against any HTTP server ("rpm", `testio -c URL --rpm`), after the IETF draft
// (draft-ietf-ippm-responsiveness): HTTP/2 load connections through libcurl, added one a second
// until goodput is stable, and probe pairs meanwhile (a small GET on a new connection, its TCP,
// TLS and HTTP times apart, and one on the load connections); RPM from their trimmed means, with
// its confidence. Downloads, then uploads where the server takes them. docs/latency.md.
// Its options, rules and /.well-known/nq reading (rpm.cpp), its loop, meter and side
// (rpm_streams.cpp) and its report section (rpm_section.cpp) share this one header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "options/given.hpp"
#include "options/option_table.hpp"
#include "report/section.hpp"
#include "spec/test_spec.hpp"
#include "workloads/forward.hpp"

namespace testio::workloads::rpm {

const Workload& workload();

// Its part of the spec (workloads/part.hpp). The large object's URL is -c's (or the one a
// /.well-known/nq configuration names).
struct RpmSpec {
  std::uint64_t max_seconds = 20;       // --rpm-time: each direction ends by then, stable or not
  std::uint64_t probes_per_second = 20; // --rpm-probes: probe pairs a second (at most 100)
  std::uint64_t max_connections = 16;   // load connections at most
  std::string small_url;                // --rpm-small: what the probes GET (default: the large URL, its first byte)
  std::string upload_url;               // --rpm-upload: where uploads go (none: downloads only)

  template <typename Part, typename Visit>
  static void fields(Part& part, Visit&& visit) {
    visit("max_seconds", part.max_seconds);
    visit("probes_per_second", part.probes_per_second);
    visit("max_connections", part.max_connections);
    visit("small_url", part.small_url);
    visit("upload_url", part.upload_url);
  }
};

// Its options group (rpm.cpp): --rpm and how long and how hard it measures.
void add_options(options::OptionTable& table);
void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
void check_options(const config::Config& config, const options::GivenOptions& given);

// The responsiveness draft's server configuration, /.well-known/nq (rpm.cpp): a JSON object whose
// "urls" name the large download, the small download and the upload (its "https_*" or "http_*"
// keys). Pure function over untrusted bytes (fuzzed); any thread.
struct NqUrls {
  std::string large, small, upload;  // upload may be empty
};

// The URLs `text` names; nullopt with `why` set (one sentence) when it names none usable.
std::optional<NqUrls> parse_nq_config(std::string_view text, std::string& why);

// Whether `url` is a /.well-known/nq configuration's.
bool is_nq_config_url(std::string_view url);

// The draft's measurement of one direction, without the network (rpm_streams.cpp): each
// interval's goodput and the probes that completed in it; the moving averages of the last four intervals; stability (the last
// four moving averages within 5% of their mean, goodput and responsiveness both); and the result,
// RPM from the 95% trimmed means of the probes of the last four intervals. Owner: the one thread
// that runs the RPM loop, then (its result, a plain value) the control thread.
struct ForeignProbe {  // a small GET on a new connection, each step timed apart (ms)
  double tcp_ms = 0, tls_ms = 0, http_ms = 0;
};

struct DirectionResult {
  std::string direction;          // download, upload
  double seconds = 0;
  std::uint32_t connections = 0;  // load connections at the end
  double goodput_bps = 0;         // the last moving average
  bool goodput_stable = false, rpm_stable = false;
  double rpm = 0;
  double spread_percent = 0;      // the last four moving averages of RPM: their standard deviation / mean
  double tcp_ms = 0, tls_ms = 0, http_foreign_ms = 0, http_self_ms = 0;  // trimmed means, last four intervals
  std::uint64_t foreign_probes = 0, self_probes = 0, failed_probes = 0;
  std::uint64_t bytes = 0;
  // high: both stable and the RPM within 5%; medium: within 10%; low otherwise.
  std::string confidence() const;
};

// The mean of the lowest 95% of `values` (the draft's trimmed mean); 0 for none.
double trimmed_mean(std::vector<double> values);

class RpmMeter {
 public:
  explicit RpmMeter(bool tls) : tls_(tls) {}
  void foreign(const ForeignProbe& probe) { pending_foreign_.push_back(probe); }
  void self(double http_ms) { pending_self_.push_back(http_ms); }
  void failed() { ++failed_; }
  // Closes an interval of `seconds` in which the load moved `bytes`; true once goodput and
  // responsiveness are both stable.
  bool close_interval(double seconds, std::uint64_t bytes);
  DirectionResult result(const std::string& direction, double seconds, std::uint32_t connections) const;
  bool goodput_stable() const noexcept { return stable(goodput_average_); }
  std::uint64_t bytes() const noexcept { return bytes_; }  // the load's, over the closed intervals

 private:
  static constexpr std::size_t kWindow = 4;  // the draft's MAD: intervals in a moving average
  static bool stable(const std::vector<double>& averages);
  double rpm_of_window(DirectionResult* detail) const;

  bool tls_;
  std::vector<double> goodput_;           // bits/s per interval
  std::vector<double> goodput_average_;   // moving averages
  std::vector<double> rpm_average_;       // RPM of each window's probes
  std::vector<std::vector<ForeignProbe>> foreign_;  // by interval
  std::vector<std::vector<double>> self_;           // by interval
  std::vector<ForeignProbe> pending_foreign_;
  std::vector<double> pending_self_;
  std::uint64_t failed_ = 0, bytes_ = 0, foreign_count_ = 0, self_count_ = 0;
};

// The client's side (rpm_streams.cpp): fetches a /.well-known/nq configuration when -c names
// one, then runs the loop on one worker and reports an RpmSection.
std::unique_ptr<TestSide> rpm_side(const config::Config& config, const spec::TestSpec& spec);

// The RPM test's part of a report (rpm_section.cpp): per direction the RPM, its confidence, the load it ran under and
// the probes' trimmed means, in text, JSON (end.testio.rpm) and metrics. Immutable once made; the
// control thread.
class RpmSection final : public report::Section {
 public:
  RpmSection(std::vector<DirectionResult> results, std::string error)
      : results_(std::move(results)), error_(std::move(error)) {}
  std::string key() const override { return "rpm"; }
  std::string text(const report::TestReport&, char unit) const override;
  nlohmann::ordered_json json(const report::TestReport&) const override;
  void metrics(report::MetricSink& sink) const override;
  bool has_own_goodput() const override { return true; }
  std::string failure() const override;

 private:
  std::vector<DirectionResult> results_;
  std::string error_;  // the first probe or load transfer that failed, if any
};

}  // namespace testio::workloads::rpm
