// One worker thread with its own io_context(1) and the streams it owns. Owner: streams are added
// by the lifecycle before start(); from then on only the worker thread touches them, and other
// threads reach the worker only through post().
#pragma once

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include "engines/stream_task.hpp"
#include "util/page_buffer.hpp"

namespace testio::engines {

class Worker {
 public:
  // `cpu` < 0: unpinned; otherwise start() pins the thread there (-A).
  explicit Worker(unsigned index, int cpu = -1);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  asio::io_context& context() noexcept { return context_; }
  const BlockingSignals& signals() const noexcept { return signals_; }
  unsigned index() const noexcept { return index_; }
  int cpu() const noexcept { return cpu_; }  // where it is pinned; -1 when it is not

  void add_stream(std::unique_ptr<StreamTask> stream);
  // --engine uring: the loop this worker's streams share, made by the factory along with the
  // worker's first such stream; null until then. It runs after every stream's begin().
  StreamLoop* loop() const noexcept { return loop_.get(); }
  void set_loop(std::unique_ptr<StreamLoop> loop) { loop_ = std::move(loop); }
  // A buffer of at least `size` bytes that every stream of this worker may read into when it keeps
  // nothing of what it reads (recv_into, trunc, an echo's reply it drops, a download it discards):
  // only this worker's thread reads into it, one call at a time, so one serves them all and the
  // memory does not grow with the connections. Ask before start(); the worker frees it.
  char* scratch(std::size_t size);
  // Starts the thread; throws std::runtime_error when it cannot be pinned to its CPU.
  void start();
  // Calls begin() on every stream, on the worker thread, at clock.start (a workload of a composed
  // test may start later in the window than the test).
  void begin_streams(TestClock clock);
  // Ends every stream's window now (SIGINT on the client); streams still waiting for their start
  // begin first, so each sees its window close.
  void end_window();
  // Closes every stream (an abort), then stops the thread; afterwards nothing runs on it.
  void stop() noexcept;

  template <typename Function>
  void post(Function&& function) {
    asio::post(context_, std::forward<Function>(function));
  }

 private:
  void run_streams(TestClock clock);
  void begin_if_waiting();

  unsigned index_;
  int cpu_;
  asio::io_context context_{1};  // one thread runs it: Asio may skip its internal locking
  asio::executor_work_guard<asio::io_context::executor_type> keep_running_;
  BlockingSignals signals_;
  asio::steady_timer start_timer_{context_};  // a later start: until clock.start (worker thread)
  std::optional<TestClock> waiting_;          // the clock of a begin still waiting for its start
  std::unique_ptr<StreamLoop> loop_;  // outlives the streams registered with it
  std::vector<util::PageBuffer> scratch_;  // the largest last; outlives the streams
  std::vector<std::unique_ptr<StreamTask>> streams_;  // destroyed before context_
  std::thread thread_;
};

}  // namespace testio::engines
