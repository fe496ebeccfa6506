#include "engines/worker.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace testio::engines {

Worker::Worker(unsigned index, int cpu) : index_(index), cpu_(cpu), keep_running_(context_.get_executor()) {}

Worker::~Worker() { stop(); }

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
    context_.run();
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
    start_timer_.expires_at(clock.start);
    start_timer_.async_wait([this](const asio::error_code& error) {
      if (!error) begin_if_waiting();
    });
  });
}

void Worker::begin_if_waiting() {
  if (!waiting_) return;
  const TestClock clock = *waiting_;
  waiting_.reset();
  start_timer_.cancel();
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
      start_timer_.cancel();  // a start still ahead would keep run() going
      for (auto& stream : streams_) stream->close();
    });
    keep_running_.reset();
    // Closing cancels every pending operation, so run() drains their handlers and returns.
    thread_.join();
  }
  streams_.clear();
}

}  // namespace testio::engines
