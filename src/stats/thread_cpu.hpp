// CPU time per thread of this process (/proc/self/task/TID/stat), snapshot before and after a
// test: which thread (a worker, the control thread, a curl loop) spent the CPU. Pure parsing and
// arithmetic, and a reader that takes a root directory so tests can point at a fake tree. Any
// thread: nothing is shared; a read opens one file per thread (not for hot paths).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace testio::stats {

// One thread's CPU time so far, from /proc/self/task/TID/stat (utime and stime, in clock ticks).
struct ThreadTicks {
  int tid = 0;
  std::string name;
  std::uint64_t user = 0, system = 0;
  // From .../schedstat (CONFIG_SCHED_INFO): nanoseconds it waited runnable for a CPU; 0 without it.
  std::uint64_t wait_ns = 0;
};
// Parses one task stat line; the name is between the first '(' and the LAST ')' (names may hold
// spaces and parentheses). nullopt when malformed.
std::optional<ThreadTicks> parse_task_stat(std::string_view text);
// Every thread of this process: ROOT/proc/self/task/*/stat ("" for the real one). Threads that
// end while being read are skipped.
std::vector<ThreadTicks> read_threads(const std::string& root = "");
// The run-queue wait of a schedstat line ("run_ns wait_ns timeslices"); nullopt when malformed.
std::optional<std::uint64_t> parse_schedstat_wait(std::string_view text);

// What one thread used between two snapshots, in CPU-seconds (ticks / sysconf(_SC_CLK_TCK)).
struct ThreadCpu {
  std::string name;
  double cpu_s = 0;
  double wait_s = 0;  // runnable but kept off a CPU by others
};
// Threads present in `after`, matched by tid; one born after `before` counts from zero. Sorted by
// cpu_s, largest first.
std::vector<ThreadCpu> thread_cpu(const std::vector<ThreadTicks>& before, const std::vector<ThreadTicks>& after);

}  // namespace testio::stats
