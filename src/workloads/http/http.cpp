#include "workloads/http/http.hpp"

#include <memory>
#include <vector>

#include "util/log.hpp"
#include "util/units.hpp"
#include "workloads/http/curl_setup.hpp"
#include "workloads/http/http_plan.hpp"
#include "workloads/http/http_streams.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"

namespace testio::workloads::http {
namespace {

transfers::TransfersSummary summarize(const HttpPlan& plan, const std::vector<std::unique_ptr<HttpTally>>& tallies,
                                      std::uint32_t slots, double seconds) {
  transfers::TransfersSummary summary;
  summary.http = true;
  summary.url = plan.numbered || plan.urls.size() == 1 ? plan.urls.front()
                                                        : std::to_string(plan.urls.size()) + " URLs";
  summary.requested = plan.count;
  summary.concurrency = slots;
  summary.reuse = plan.reuse;
  summary.saved_to = plan.save_dir;
  summary.seconds = seconds;
  HttpTally all;
  for (const auto& tally : tallies) {
    all.connect_ns.merge(tally->connect_ns);
    all.connect_seen_ns.merge(tally->connect_seen_ns);
    all.first_byte_ns.merge(tally->first_byte_ns);
    all.transfer_ns.merge(tally->transfer_ns);
    all.loop_turn_ns.merge(tally->loop_turn_ns);
    for (const auto& [status, count] : tally->statuses) all.statuses[status] += count;
    summary.completed += tally->completed;
    summary.failed += tally->failed;
    summary.bytes += tally->bytes;
    summary.partial_files_removed += tally->partial_files_removed;
    if (summary.first_error.empty()) summary.first_error = tally->first_error;
  }
  summary.connect = stats::summarize(all.connect_ns);
  summary.connect_seen = stats::summarize(all.connect_seen_ns);
  summary.first_byte = stats::summarize(all.first_byte_ns);
  summary.transfer = stats::summarize(all.transfer_ns);
  summary.loop_turn = stats::summarize(all.loop_turn_ns);
  summary.statuses.assign(all.statuses.begin(), all.statuses.end());
  summary.size = summary.completed ? summary.bytes / summary.completed : 0;
  if (seconds > 0) {
    summary.transfers_per_second = static_cast<double>(summary.completed) / seconds;
    summary.bits_per_second = util::bits_per_second(summary.bytes, seconds);
  }
  return summary;
}

// What ends a test of downloads, in the report's words.
std::string downloads_extent(const spec::TestSpec& spec) {
  const transfers::TransfersSpec downloads = part_of<transfers::TransfersSpec>(spec);
  return std::to_string(downloads.count) + " downloads on " + (downloads.reuse ? "kept" : "fresh") + " connections";
}

// One HttpSlot per slot; the slots of a worker share its CurlLoop. Owner: the lifecycle (control
// thread); each tally is written by its worker and read once the workers stopped.
class DownloadSide final : public TestSide {
 public:
  DownloadSide(const config::Config& config, const spec::TestSpec& spec) : spec_(spec), plan_(make_http_plan(config)) {
    init_curl_once();
  }

  void describe_start(report::StartInfo& start) const override { start.extent = downloads_extent(spec_); }

  DirectionLayout layout() const override { return {spec_.connections, 0, /*client_sends_forward=*/false}; }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<asio::ip::tcp::socket>) override {
    auto* loop = dynamic_cast<CurlLoop*>(place.worker.loop());
    if (!loop) {
      tallies_.push_back(std::make_unique<HttpTally>());
      auto made = std::make_unique<CurlLoop>(*tallies_.back());
      loop = made.get();
      place.worker.set_loop(std::move(made));
    }
    return std::make_unique<HttpSlot>(*loop, *plan_, place.counters, std::move(place.done));
  }

  void add_to_report(report::TestReport& report) const override {
    transfers::TransfersSummary summary = summarize(*plan_, tallies_, spec_.connections, report.local().wall_s);
    if (summary.partial_files_removed)
      spdlog::warn("removed {} partially written files under {}", summary.partial_files_removed, plan_->save_dir);
    report.sections.push_back(std::make_shared<transfers::TransfersSection>(std::move(summary)));
  }

  std::string failure(const report::TestReport& report) const override {
    const auto* section = report.section<transfers::TransfersSection>();
    if (!section) return {};
    const transfers::TransfersSummary& done = section->summary();
    if (done.completed == done.requested) return {};
    if (!done.failed) return std::to_string(done.completed) + " of " + std::to_string(done.requested) +
                             " transfers completed; the rest did not start";
    return std::to_string(done.failed) + " of " + std::to_string(done.requested) + " transfers failed; the first: " +
           done.first_error;
  }

 private:
  spec::TestSpec spec_;
  std::unique_ptr<HttpPlan> plan_;
  std::vector<std::unique_ptr<HttpTally>> tallies_;  // one per worker
};

class Http final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    check_download_count(spec, limits);
  }

  std::string extent(const spec::TestSpec& spec) const override { return downloads_extent(spec); }
  // Its count and --reuse are a transfers test's (its --size is the servers' to say).
  bool takes_setting(std::string_view name) const override { return part_has<transfers::TransfersSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return std::make_unique<DownloadSide>(config, spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec&, const ServerResources&) const override {
    throw std::runtime_error("HTTP downloads run against an HTTP server, not testio -s");
  }
};

}  // namespace

const Workload& workload() {
  static const Http http;
  return http;
}

}  // namespace testio::workloads::http
