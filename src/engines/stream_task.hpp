// The interface every engine's streams implement: one StreamTask per data connection, run on a
// worker thread. A worker owns its thread, its streams and their start and stop; a stream moves
// bytes and counts them.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "spec/test_spec.hpp"
#include "stats/counters.hpp"

namespace testio::engines {

using Clock = std::chrono::steady_clock;

// `value` seconds (-t, -i, and the limits made from them) as the clock's duration.
inline Clock::duration clock_seconds(double value) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
}

// How long a test's streams may take: a timed test's window and `grace` beyond it; a counted
// test as long as its bytes take (a year stands for that).
inline Clock::duration run_limit(const spec::TestSpec& spec, Clock::duration grace) {
  return spec.timed() ? clock_seconds(spec.window_s()) + grace : Clock::duration(std::chrono::hours(24 * 365));
}

struct TestClock {
  Clock::time_point start;
  Clock::time_point deadline = Clock::time_point::max();  // max: a byte-count test, no deadline

  // A test's clock from now: a timed test's window (-O and -t) closes at the deadline.
  static TestClock starting_now(const spec::TestSpec& spec) {
    TestClock clock{Clock::now()};
    if (spec.timed()) clock.deadline = clock.start + clock_seconds(spec.window_s());
    return clock;
  }

  // A workload of a composed test that runs for part of the window: its streams begin `begins_s`
  // after this clock's start and end `ends_s` after it (0: at this clock's deadline).
  TestClock within(double begins_s, double ends_s) const noexcept {
    TestClock part{start + clock_seconds(begins_s), deadline};
    if (ends_s > 0 && deadline != Clock::time_point::max()) part.deadline = start + clock_seconds(ends_s);
    return part;
  }

  stats::TestNanos since_start(Clock::time_point now) const noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
  }
};

// For a stream that runs a loop of blocking system calls on its worker thread (and so never sees a
// posted end_window() or close()): the worker raises these flags as well, and the loop checks
// them between calls, which a receive timeout keeps short.
struct BlockingSignals {
  std::atomic<bool> window_closed{false};
  std::atomic<bool> aborted{false};
};

// Called once, on the worker thread, when a stream has finished for good (cleanly or not).
using StreamDone = std::function<void()>;

// Marks a stream ended (cleanly or not) for whoever reads its counters, then tells the engine.
inline void report_finished(stats::StreamCounters& counters, bool failed, const StreamDone& on_done) {
  counters.failed.store(failed, std::memory_order_relaxed);
  counters.finished.store(true, std::memory_order_release);
  if (on_done) on_done();
}

class StreamTask {
 public:
  virtual ~StreamTask() = default;
  // Starts moving data; called on the owning worker thread.
  virtual void begin(const TestClock& clock) = 0;
  // Ends the window now, as its deadline would: a sender half-closes, a transfer slot takes no
  // further transfer (a server's is then done). A receiver must ignore it and read on to EOF: the
  // server ends every window once the client is done, before it waits for its receivers to drain.
  virtual void end_window() noexcept {}
  // Aborts: closes the socket so pending operations end; called on the owning worker thread.
  virtual void close() noexcept = 0;
};

// A loop that moves the data of several of a worker's streams at once (--engine uring): the worker
// runs it as one blocking job on its thread, after every stream's begin(), until they all ended.
// It sees end_window() and stop() through the worker's BlockingSignals.
class StreamLoop {
 public:
  virtual ~StreamLoop() = default;
  virtual void run(const TestClock& clock, const BlockingSignals& signals) = 0;
};

}  // namespace testio::engines
