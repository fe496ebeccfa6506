#include "lifecycle/parts.hpp"

#include <asio/experimental/awaitable_operators.hpp>

#include "lifecycle/start.hpp"

namespace testio::lifecycle {

void TestParts::add(TestPart& part, std::uint32_t first) {
  part.layout = part.side->layout();
  part.threads = spec::worker_threads(part.spec.engine, part.spec.threads, part.layout.total());
  part.first = first;
}

spec::TestSpec TestParts::composed_spec() const {
  std::vector<spec::TestSpec> specs;
  for (const TestPart& part : parts_) specs.push_back(part.spec);
  return spec::composed(std::move(specs));
}

std::uint32_t TestParts::connections() const noexcept {
  std::uint32_t total = 0;
  for (const TestPart& part : parts_) total += part.connections();
  return total;
}

unsigned TestParts::threads() const noexcept {
  unsigned total = 0;
  for (const TestPart& part : parts_) total += part.threads;
  return total;
}

std::pair<TestPart*, std::uint32_t> TestParts::locate(std::uint32_t number) noexcept {
  for (TestPart& part : parts_)
    if (number >= part.first && number - part.first < part.connections()) return {&part, number - part.first};
  return {nullptr, 0};
}

namespace {

// A composed test's later workload: its intervals reach the reporter as with_interval().
class WithIntervals final : public report::Reporter {
 public:
  WithIntervals(report::Reporter& reporter, std::size_t workload, report::StartInfo start)
      : reporter_(reporter), workload_(workload), start_(std::move(start)) {}
  void start(const report::StartInfo&) override {}
  void interval(const stats::IntervalRecord& record) override { reporter_.with_interval(workload_, start_, record); }
  void end(const report::TestReport&) override {}
  void error(const std::string&) override {}

 private:
  report::Reporter& reporter_;
  std::size_t workload_;
  report::StartInfo start_;  // in the direction shown
};

}  // namespace

void TestParts::show_live(report::Reporter& reporter, workloads::Side local) {
  for (TestPart& part : parts_)
    part.streams->measurement().annotate_with(
        [side = part.side.get()](stats::IntervalRecord& record) { side->annotate(record); });
  parts_.front().streams->measurement().show_live(reporter);
  for (std::size_t k = 1; k < parts_.size(); ++k) {
    TestPart& part = parts_[k];
    const bool forward = part.layout.live_forward();
    part.live = std::make_unique<WithIntervals>(
        reporter, k + 1, direction_start(part.start, part.layout.connections(forward), part.layout.sends(local, forward)));
    part.streams->measurement().show_live(*part.live);
  }
}

void TestParts::begin(const engines::TestClock& clock) {
  for (TestPart& part : parts_) part.streams->begin(clock);
}

void TestParts::end_window() {
  for (TestPart& part : parts_)
    if (part.streams) part.streams->end_window();
}

asio::awaitable<bool> TestParts::all_done(std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (TestPart& part : parts_) {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{});
    const bool done = co_await part.streams->all_done(left);  // a named local: no co_await in a condition
    if (!done) co_return false;
  }
  co_return true;
}

asio::awaitable<void> TestParts::sample() { co_await sample_from(0); }

// Part k's sampler beside those of the parts after it: each runs until the whole is cancelled.
asio::awaitable<void> TestParts::sample_from(std::size_t k) {
  using namespace asio::experimental::awaitable_operators;
  if (k + 1 == parts_.size())
    co_await parts_[k].streams->measurement().sample();
  else
    co_await (parts_[k].streams->measurement().sample() && sample_from(k + 1));
}

std::size_t TestParts::remaining() const noexcept {
  std::size_t total = 0;
  for (const TestPart& part : parts_)
    if (part.streams) total += part.streams->remaining();
  return total;
}

void TestParts::stop() noexcept {
  for (TestPart& part : parts_)
    if (part.streams) part.streams->stop();
}

namespace {

// What a report's sender moved, both directions of --bidir.
std::uint64_t bytes_sent(const report::TestReport& report) {
  std::uint64_t bytes = stats::summarize(report::summary_figures(report.sender)).bytes;
  if (report.bidir_reverse) bytes += stats::summarize(report::summary_figures(report.bidir_reverse->sender)).bytes;
  return bytes;
}

// Each side's CPU served every workload: each report's cost per GB counts the others' bytes too.
void share_cpu(std::vector<report::TestReport>& reports) {
  std::uint64_t total = 0;
  for (const report::TestReport& report : reports) total += bytes_sent(report);
  for (report::TestReport& report : reports) {
    const std::uint64_t others = total - bytes_sent(report);
    report.composed = true;
    report.other_bytes += others;
    if (!report.bidir_reverse) continue;
    auto reverse = std::make_shared<report::TestReport>(*report.bidir_reverse);
    reverse->composed = true;
    reverse->other_bytes += others;
    report.bidir_reverse = std::move(reverse);
  }
}

}  // namespace

report::TestReport TestParts::joined(std::vector<report::TestReport> reports) {
  if (reports.size() > 1) share_cpu(reports);
  report::TestReport first = std::move(reports.front());
  first.with.assign(std::make_move_iterator(reports.begin() + 1), std::make_move_iterator(reports.end()));
  return first;
}

}  // namespace testio::lifecycle
