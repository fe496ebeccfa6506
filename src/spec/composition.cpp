// Composed tests: one spec whose `with` lists the workloads that run beside its own in the same
// window. Each workload keeps its own connections, direction and settings; the window, intervals,
// omit, CPUs and --iface-stats are the test's.
#include <cstdio>
#include <string>

#include "spec/test_spec.hpp"
#include "util/units.hpp"

namespace testio::spec {
namespace {

// Ended by a byte count rather than by the window (a workload's own counts, --num or --transfers,
// are its rules': workloads::check()).
bool counted(const TestSpec& spec) noexcept { return !spec.timed() || spec.total_bytes; }

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// Where a workload runs in the window: from begins_s to ends_s (0: the window's end).
void check_span(const TestSpec& part, const TestSpec& test, const std::string& which) {
  if (part.begins_s == 0 && part.ends_s == 0) return;
  if (test.with.empty())
    throw SpecError("begins_s and ends_s place a workload of a composed test in its window; this test has one");
  const double window = test.window_s();
  const double ends = part.ends_s > 0 ? part.ends_s : window;
  if (!(part.begins_s >= 0) || !(part.ends_s >= 0) || !(part.begins_s < ends) || !(ends <= window))
    throw SpecError(which + " runs from " + seconds(part.begins_s) + " s to " +
                    seconds(ends) + " s: it must begin before it ends, within the " +
                    seconds(window) + " s window");
}

}  // namespace

void share_test_wide(const TestSpec& test, TestSpec& part) {
  part.duration_s = test.duration_s;
  part.omit_s = test.omit_s;
  part.interval_s = test.interval_s;
  part.cpus = test.cpus;
  part.iface_stats = test.iface_stats;
}

bool shares_test_wide(const TestSpec& test, const TestSpec& part) {
  TestSpec shared = part;
  share_test_wide(test, shared);
  return shared == part;
}

std::vector<TestSpec> workloads_of(const TestSpec& test) {
  std::vector<TestSpec> workloads;
  workloads.reserve(1 + test.with.size());
  workloads.push_back(test);
  workloads.front().with.clear();
  for (const TestSpec& part : test.with) workloads.push_back(part);
  return workloads;
}

TestSpec composed(std::vector<TestSpec> workloads) {
  TestSpec test = std::move(workloads.front());
  test.with.assign(std::make_move_iterator(workloads.begin() + 1), std::make_move_iterator(workloads.end()));
  return test;
}

void check_composition(const TestSpec& test, const Limits& limits) {
  check_span(test, test, "workload 1 (" + util::printable(test.workload) + ")");
  if (test.with.empty()) return;
  if (test.with.size() + 1 > kMaxWorkloads)
    throw SpecError("a test runs at most " + std::to_string(kMaxWorkloads) + " workloads side by side");
  if (counted(test))
    throw SpecError("workloads run side by side only for a time (-t): a counted test (-n, --num, --transfers, "
                    "a URL) runs alone");
  std::uint64_t connections = test.data_connections();
  for (std::size_t k = 0; k < test.with.size(); ++k) {
    const TestSpec& part = test.with[k];
    const std::string which = "workload " + std::to_string(k + 2) + " (" + util::printable(part.workload) + ")";
    if (!part.with.empty()) throw SpecError(which + " lists workloads of its own: only the test's first may");
    if (!shares_test_wide(test, part))
      throw SpecError(which + " has a window, intervals, omit, -A or --iface-stats of its own: they are the test's");
    if (counted(part)) throw SpecError(which + " is counted (-n, --num): workloads side by side run for a time");
    check_span(part, test, which);
    connections += part.data_connections();
  }
  if (connections > limits.max_connections)
    throw SpecError("the workloads open " + std::to_string(connections) + " connections together, above the cap of " +
                    std::to_string(limits.max_connections) + " (--max-connections)");
}

}  // namespace testio::spec
