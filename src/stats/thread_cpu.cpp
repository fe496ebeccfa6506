#include "stats/thread_cpu.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include <dirent.h>
#include <unistd.h>

#include "util/mapped_file.hpp"

namespace testio::stats {
namespace {

// The fields after the name: state (3), ppid, pgrp, session, tty_nr, tpgid, flags, minflt,
// cminflt, majflt, cmajflt, then utime (14) and stime (15). tty_nr and tpgid may be negative, so
// the skipped ones are only counted as words.
constexpr int kWordsBeforeUtime = 11;

std::string_view next_stat_word(std::string_view& rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '\n') ++end;
  std::string_view word = rest.substr(0, end);
  rest.remove_prefix(end);
  return word;
}

template <typename Number>
bool parse_stat_number(std::string_view word, Number& value) {
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return !word.empty() && error == std::errc() && end == word.data() + word.size();
}

std::uint64_t ticks_of(const ThreadTicks& ticks) noexcept { return ticks.user + ticks.system; }

}  // namespace

std::optional<ThreadTicks> parse_task_stat(std::string_view text) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ThreadTicks ticks;
  std::string_view tid_text = text.substr(0, open);
  if (!tid_text.empty() && tid_text.back() == ' ') tid_text.remove_suffix(1);
  if (!parse_stat_number(tid_text, ticks.tid) || ticks.tid <= 0) return std::nullopt;
  ticks.name = std::string(text.substr(open + 1, close - open - 1));
  std::string_view rest = text.substr(close + 1);
  for (int skipped = 0; skipped < kWordsBeforeUtime; ++skipped)
    if (next_stat_word(rest).empty()) return std::nullopt;
  if (!parse_stat_number(next_stat_word(rest), ticks.user) || !parse_stat_number(next_stat_word(rest), ticks.system)) return std::nullopt;
  return ticks;
}

std::optional<std::uint64_t> parse_schedstat_wait(std::string_view text) {
  std::uint64_t run_ns = 0, wait_ns = 0;
  if (!parse_stat_number(next_stat_word(text), run_ns) || !parse_stat_number(next_stat_word(text), wait_ns))
    return std::nullopt;
  return wait_ns;
}

std::vector<ThreadTicks> read_threads(const std::string& root) {
  const std::string tasks = root + "/proc/self/task";
  std::vector<ThreadTicks> threads;
  DIR* directory = ::opendir(tasks.c_str());
  if (!directory) return threads;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string_view tid(entry->d_name);
    if (tid == "." || tid == "..") continue;
    // A thread that ended since readdir() has no stat left to read: empty text, skipped.
    const std::string task = tasks + "/" + entry->d_name;
    if (std::optional<ThreadTicks> ticks = parse_task_stat(util::read_whole_file(task + "/stat").value_or(""))) {
      ticks->wait_ns = parse_schedstat_wait(util::read_whole_file(task + "/schedstat").value_or("")).value_or(0);
      threads.push_back(std::move(*ticks));
    }
  }
  ::closedir(directory);
  std::sort(threads.begin(), threads.end(), [](const ThreadTicks& a, const ThreadTicks& b) { return a.tid < b.tid; });
  return threads;
}

std::vector<ThreadCpu> thread_cpu(const std::vector<ThreadTicks>& before, const std::vector<ThreadTicks>& after) {
  const long clock_ticks = ::sysconf(_SC_CLK_TCK);
  const double ticks_per_second = clock_ticks > 0 ? static_cast<double>(clock_ticks) : 100.0;
  // Sorted by tid: the threads engine may run thousands of threads.
  std::vector<const ThreadTicks*> earlier;
  earlier.reserve(before.size());
  for (const ThreadTicks& then : before) earlier.push_back(&then);
  auto by_tid = [](const ThreadTicks* a, const ThreadTicks* b) { return a->tid < b->tid; };
  std::sort(earlier.begin(), earlier.end(), by_tid);
  std::vector<ThreadCpu> used;
  used.reserve(after.size());
  for (const ThreadTicks& now : after) {
    std::uint64_t from = 0, waited_from = 0;
    auto then = std::lower_bound(earlier.begin(), earlier.end(), &now, by_tid);
    // A count that went back is a new thread given an ended one's tid: it starts at zero.
    if (then != earlier.end() && (*then)->tid == now.tid && ticks_of(**then) <= ticks_of(now)) {
      from = ticks_of(**then);
      if ((*then)->wait_ns <= now.wait_ns) waited_from = (*then)->wait_ns;
    }
    used.push_back({now.name, static_cast<double>(ticks_of(now) - from) / ticks_per_second,
                    static_cast<double>(now.wait_ns - waited_from) * 1e-9});
  }
  std::stable_sort(used.begin(), used.end(), [](const ThreadCpu& a, const ThreadCpu& b) { return a.cpu_s > b.cpu_s; });
  return used;
}

}  // namespace testio::stats
