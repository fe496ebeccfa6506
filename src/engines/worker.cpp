// The workers: one thread with its own io_context and streams, T of them dealt round-robin
// (WorkerPool), and the latch the control thread awaits while the streams count down on them.
#include "engines/worker.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <pthread.h>

#include "engines/completion_latch.hpp"
#include "engines/worker_pool.hpp"

namespace testio::engines {

struct Worker::Io {
  asio::io_context context{1};  // one thread runs it: Asio may skip its internal locking
  asio::executor_work_guard<asio::io_context::executor_type> keep_running{context.get_executor()};
  asio::steady_timer start_timer{context};  // a later start: until clock.start (worker thread)
};

Worker::Worker(unsigned index, int cpu) : index_(index), cpu_(cpu), io_(std::make_unique<Io>()) {}

Worker::~Worker() { stop(); }

asio::io_context& Worker::context() noexcept { return io_->context; }

void Worker::post(std::function<void()> function) { asio::post(io_->context, std::move(function)); }

void Worker::add_stream(std::unique_ptr<StreamTask> stream) {
  streams_.push_back(std::move(stream));
}

char* Worker::scratch(std::size_t size) {
  // Sizes only grow within a test (every receiver of a test asks for its -l); a larger one gets a
  // buffer of its own, since streams given the smaller one already hold it.
  if (scratch_.empty() || scratch_.back().size() < size) scratch_.emplace_back(std::max<std::size_t>(size, 1));
  return scratch_.back().data();
}

void Worker::start() {
  thread_ = std::thread([this] {
    std::string name = "testio-w" + std::to_string(index_);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    io_->context.run();
  });
  if (cpu_ < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu_, &set);
  // Pinned from here, before any stream begins: the thread has only entered run().
  int error = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set);
  if (error != 0)
    throw std::runtime_error("cannot pin worker " + std::to_string(index_) + " to CPU " + std::to_string(cpu_) + ": " +
                             std::strerror(error));
}

void Worker::begin_streams(TestClock clock) {
  post([this, clock] {
    if (clock.start <= Clock::now()) return run_streams(clock);
    waiting_ = clock;
    io_->start_timer.expires_at(clock.start);
    io_->start_timer.async_wait([this](const asio::error_code& error) {
      if (!error) begin_if_waiting();
    });
  });
}

void Worker::begin_if_waiting() {
  if (!waiting_) return;
  const TestClock clock = *waiting_;
  waiting_.reset();
  io_->start_timer.cancel();
  run_streams(clock);
}

void Worker::run_streams(TestClock clock) {
  for (auto& stream : streams_) stream->begin(clock);
  // Blocks this thread until the loop's streams end; end_window() and stop() reach it through
  // signals_, and their posted work runs after it returns.
  if (loop_) loop_->run(clock, signals_);
}

void Worker::end_window() {
  signals_.window_closed.store(true, std::memory_order_relaxed);
  post([this] {
    begin_if_waiting();
    for (auto& stream : streams_) stream->end_window();
  });
}

void Worker::stop() noexcept {
  if (thread_.joinable()) {
    signals_.aborted.store(true, std::memory_order_relaxed);
    post([this] {
      waiting_.reset();
      io_->start_timer.cancel();  // a start still ahead would keep run() going
      for (auto& stream : streams_) stream->close();
    });
    io_->keep_running.reset();
    // Closing cancels every pending operation, so run() drains their handlers and returns.
    thread_.join();
  }
  streams_.clear();
}

WorkerPool::WorkerPool(unsigned threads, const std::vector<std::uint32_t>& cpus) {
  workers_.reserve(threads);
  placed_.assign(threads, 0);
  for (unsigned i = 0; i < threads; ++i)
    workers_.push_back(std::make_unique<Worker>(i, cpus.empty() ? -1 : static_cast<int>(cpus[i % cpus.size()])));
}

Worker& WorkerPool::worker_for_stream(std::uint32_t stream) noexcept {
  return *workers_[stream % workers_.size()];
}

Worker* WorkerPool::worker_on_cpu(int cpu) noexcept {
  if (cpu < 0) return nullptr;
  std::size_t best = workers_.size();
  for (std::size_t k = 0; k < workers_.size(); ++k)
    if (workers_[k]->cpu() == cpu && (best == workers_.size() || placed_[k] < placed_[best])) best = k;
  if (best == workers_.size()) return nullptr;
  ++placed_[best];
  return workers_[best].get();
}

void WorkerPool::start() {
  for (auto& worker : workers_) worker->start();
}

void WorkerPool::begin(TestClock clock) {
  for (auto& worker : workers_) worker->begin_streams(clock);
}

void WorkerPool::end_window() {
  for (auto& worker : workers_) worker->end_window();
}

void WorkerPool::stop() noexcept {
  for (auto& worker : workers_) worker->stop();
}

CompletionLatch::CompletionLatch(const asio::any_io_executor& control, std::size_t count)
    : remaining_(count), timer_(std::make_unique<asio::steady_timer>(control)), reached_(count == 0) {}

CompletionLatch::~CompletionLatch() = default;

void CompletionLatch::count_down() noexcept {
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The timer is touched only on its own executor: a waiting coroutine wakes when it is cancelled.
  asio::post(timer_->get_executor(), [self = shared_from_this()] {
    self->reached_ = true;
    self->timer_->cancel();
  });
}

asio::awaitable<bool> CompletionLatch::wait(std::chrono::steady_clock::duration limit) {
  if (reached_) co_return true;
  timer_->expires_after(limit);
  asio::error_code ignored;
  co_await timer_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  co_return reached_;
}

}  // namespace testio::engines
