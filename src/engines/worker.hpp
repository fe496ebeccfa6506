// One worker thread with its own io_context(1) and the streams it owns. Owner: streams are added
// by the lifecycle before start(); from then on only the worker thread touches them, and other
// threads reach the worker only through post().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "net/asio_fwd.hpp"
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

  asio::io_context& context() noexcept;
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

  // Runs `function` on the worker thread: how a socket or a begin reaches it, never per call.
  void post(std::function<void()> function);

 private:
  void run_streams(TestClock clock);
  void begin_if_waiting();

  struct Io;  // the io_context, what keeps it running, the start timer (worker.cpp keeps Asio)

  unsigned index_;
  int cpu_;
  std::unique_ptr<Io> io_;
  BlockingSignals signals_;
  std::optional<TestClock> waiting_;          // the clock of a begin still waiting for its start
  std::unique_ptr<StreamLoop> loop_;  // outlives the streams registered with it
  std::vector<util::PageBuffer> scratch_;  // the largest last; outlives the streams
  std::vector<std::unique_ptr<StreamTask>> streams_;  // destroyed before io_
  std::thread thread_;
};

}  // namespace testio::engines
