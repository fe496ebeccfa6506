#include "stats/thread_cpu.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace testio::stats {
namespace {

namespace fs = std::filesystem;

// A task stat line as the kernel writes it: utime 150 and stime 30 are fields 14 and 15.
constexpr const char* kWorkerLine =
    "4242 (testio-w0) S 4240 4240 31508 34816 -1 4194368 1033 0 2 0 150 30 0 0 20 0 9 0 1428447 "
    "627146752 2112 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 -1 1 0 0 0 0 0\n";

double seconds(std::uint64_t ticks) { return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)); }

std::string stat_line(int tid, const std::string& name, std::uint64_t user, std::uint64_t system) {
  return std::to_string(tid) + " (" + name + ") R 1 1 1 0 -1 4194304 0 0 0 0 " + std::to_string(user) + " " +
         std::to_string(system) + " 0 0 20 0 1 0 100 0 0\n";
}

TEST(ThreadCpu, ParsesAWorkerLine) {
  std::optional<ThreadTicks> ticks = parse_task_stat(kWorkerLine);
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->tid, 4242);
  EXPECT_EQ(ticks->name, "testio-w0");
  EXPECT_EQ(ticks->user, 150u);
  EXPECT_EQ(ticks->system, 30u);
}

TEST(ThreadCpu, NameRunsToTheLastParenthesis) {
  std::optional<ThreadTicks> ticks = parse_task_stat(stat_line(77, "a (b) c", 7, 3));
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->name, "a (b) c");
  EXPECT_EQ(ticks->user, 7u);
  EXPECT_EQ(ticks->system, 3u);
  ticks = parse_task_stat(stat_line(5, ") 1 2 (", 1, 2));
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->name, ") 1 2 (");
  ticks = parse_task_stat(stat_line(6, "", 4, 5));
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->name, "");
  EXPECT_EQ(ticks->system, 5u);
}

TEST(ThreadCpu, MalformedLinesAreNothing) {
  EXPECT_FALSE(parse_task_stat(""));
  EXPECT_FALSE(parse_task_stat("garbage"));
  EXPECT_FALSE(parse_task_stat("12 (x"));
  EXPECT_FALSE(parse_task_stat("12 x) R 1 1 1 0 -1 0 0 0 0 0 1 2"));
  EXPECT_FALSE(parse_task_stat(") 12 (x R 1 1 1 0 -1 0 0 0 0 0 1 2"));
  EXPECT_FALSE(parse_task_stat("(x) R 1 1 1 0 -1 0 0 0 0 0 1 2"));
  EXPECT_FALSE(parse_task_stat("-3 (x) R 1 1 1 0 -1 0 0 0 0 0 1 2"));
  EXPECT_FALSE(parse_task_stat("1x (x) R 1 1 1 0 -1 0 0 0 0 0 1 2"));
  EXPECT_FALSE(parse_task_stat("12 (x) R 1 1 1 0 -1 0 0 0 0 0 1"));  // no stime
  EXPECT_FALSE(parse_task_stat("12 (x) R 1 2"));
  EXPECT_FALSE(parse_task_stat("12 (x) R 1 1 1 0 -1 0 0 0 0 0 a b"));
  EXPECT_FALSE(parse_task_stat("12 (x) R 1 1 1 0 -1 0 0 0 0 0 -1 2"));
}

TEST(ThreadCpu, MatchesByTidSortedLargestFirst) {
  const std::vector<ThreadTicks> before = {{10, "testio", 100, 50}, {11, "testio-w0", 10, 0}, {12, "testio-w1", 5, 5},
                                           {13, "ended", 1, 1}};
  // Another order, a worker renamed meanwhile, one thread ended and one born.
  const std::vector<ThreadTicks> after = {{12, "testio-w1", 305, 105}, {10, "testio", 101, 50},
                                          {11, "renamed", 60, 20}, {14, "born", 30, 10}};
  const std::vector<ThreadCpu> used = thread_cpu(before, after);
  ASSERT_EQ(used.size(), 4u);
  EXPECT_EQ(used[0].name, "testio-w1");
  EXPECT_DOUBLE_EQ(used[0].cpu_s, seconds(400));
  EXPECT_EQ(used[1].name, "renamed");
  EXPECT_DOUBLE_EQ(used[1].cpu_s, seconds(70));
  EXPECT_EQ(used[2].name, "born");  // counted from zero
  EXPECT_DOUBLE_EQ(used[2].cpu_s, seconds(40));
  EXPECT_EQ(used[3].name, "testio");
  EXPECT_DOUBLE_EQ(used[3].cpu_s, seconds(1));
}

TEST(ThreadCpu, WaitForACpuIsTheSchedstatDelta) {
  EXPECT_EQ(parse_schedstat_wait("123456 7890 42\n"), 7890u);
  EXPECT_FALSE(parse_schedstat_wait("").has_value());
  EXPECT_FALSE(parse_schedstat_wait("12 x 3").has_value());
  const std::vector<ThreadCpu> used =
      thread_cpu({{5, "testio-w0", 10, 0, 1'000'000'000}}, {{5, "testio-w0", 20, 0, 3'500'000'000}});
  ASSERT_EQ(used.size(), 1u);
  EXPECT_DOUBLE_EQ(used[0].wait_s, 2.5);
  // A tid given again waits from zero too.
  EXPECT_DOUBLE_EQ(thread_cpu({{6, "old", 50, 0, 9'000'000'000}}, {{6, "new", 1, 0, 500'000'000}})[0].wait_s, 0.5);
}

TEST(ThreadCpu, ATidGivenAgainCountsFromZero) {
  // Thread 20 ended and a new thread got its tid: its count is below the old one's.
  const std::vector<ThreadCpu> used = thread_cpu({{20, "old", 500, 100}}, {{20, "new", 3, 1}});
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].name, "new");
  EXPECT_DOUBLE_EQ(used[0].cpu_s, seconds(4));
  EXPECT_TRUE(thread_cpu({{1, "a", 1, 1}}, {}).empty());
  const std::vector<ThreadCpu> idle = thread_cpu({}, {{1, "a", 0, 0}, {2, "b", 0, 0}});
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].cpu_s, 0.0);
}

// ROOT/proc/self/task/TID/stat in a temporary directory.
class FakeTasks : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("testio-tasks-" + std::to_string(::getpid()));
    fs::create_directories(tasks());
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path tasks() const { return root_ / "proc" / "self" / "task"; }
  void add_task(const std::string& tid, const std::string& stat) {
    fs::create_directories(tasks() / tid);
    std::ofstream(tasks() / tid / "stat") << stat;
  }

  fs::path root_;
};

TEST_F(FakeTasks, ReadsEveryThreadByTid) {
  add_task("4242", kWorkerLine);
  add_task("4240", stat_line(4240, "testio", 9, 1));
  add_task("4243", stat_line(4243, "a (b) c", 2, 3));
  fs::create_directories(tasks() / "4244");  // ended while being read: its stat is gone
  add_task("4245", "");                      // ended: an empty read
  add_task("4246", "4246 (cut");
  const std::vector<ThreadTicks> threads = read_threads(root_.string());
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].tid, 4240);
  EXPECT_EQ(threads[0].name, "testio");
  EXPECT_EQ(threads[1].tid, 4242);
  EXPECT_EQ(threads[1].user, 150u);
  EXPECT_EQ(threads[2].name, "a (b) c");
}

TEST_F(FakeTasks, NoTaskDirectoryIsNoThreads) {
  fs::remove_all(tasks());
  EXPECT_TRUE(read_threads(root_.string()).empty());
  EXPECT_TRUE(read_threads("/nonexistent-testio-root").empty());
}

// This process: a thread born between the snapshots that spins until the kernel has charged it two
// ticks shows under its own name with at least those, counted from zero. Its own count is the
// condition, so a busy machine makes it wait longer, not fail.
TEST(ThreadCpu, ReadsThisProcess) {
  const std::vector<ThreadTicks> before = read_threads();
  const int self = static_cast<int>(::syscall(SYS_gettid));
  ASSERT_TRUE(std::any_of(before.begin(), before.end(), [&](const ThreadTicks& t) { return t.tid == self; }));
  std::atomic<bool> charged{false}, release{false};
  std::thread spinner([&] {
    ::pthread_setname_np(::pthread_self(), "testio-spin");
    const int tid = static_cast<int>(::syscall(SYS_gettid));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::atomic<std::uint64_t> work{0};
    for (;;) {
      const std::vector<ThreadTicks> now = read_threads();
      auto me = std::find_if(now.begin(), now.end(), [&](const ThreadTicks& t) { return t.tid == tid; });
      if ((me != now.end() && me->user + me->system >= 2) || std::chrono::steady_clock::now() > give_up) break;
      for (int step = 0; step < 1000000; ++step) work.fetch_add(1, std::memory_order_relaxed);
    }
    charged = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!charged) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::vector<ThreadTicks> after = read_threads();
  release = true;
  spinner.join();
  const std::vector<ThreadCpu> used = thread_cpu(before, after);
  auto spin = std::find_if(used.begin(), used.end(), [](const ThreadCpu& t) { return t.name == "testio-spin"; });
  ASSERT_NE(spin, used.end());
  EXPECT_GE(spin->cpu_s, seconds(2));
  EXPECT_TRUE(std::is_sorted(used.begin(), used.end(),
                             [](const ThreadCpu& a, const ThreadCpu& b) { return a.cpu_s > b.cpu_s; }));
}

}  // namespace
}  // namespace testio::stats
