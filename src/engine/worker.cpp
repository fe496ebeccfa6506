#include "engine/worker.hpp"

#include <pthread.h>

#include <string>

namespace testio::engine {

Worker::Worker(unsigned index) : index_(index), keep_running_(context_.get_executor()) {}

Worker::~Worker() { stop(); }

void Worker::add_stream(std::unique_ptr<workloads::StreamTask> stream) {
  streams_.push_back(std::move(stream));
}

void Worker::start() {
  thread_ = std::thread([this] {
    std::string name = "testio-w" + std::to_string(index_);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    context_.run();
  });
}

void Worker::begin_streams(workloads::TestClock clock) {
  post([this, clock] {
    for (auto& stream : streams_) stream->begin(clock);
  });
}

void Worker::end_window() {
  signals_.window_closed.store(true, std::memory_order_relaxed);
  post([this] {
    for (auto& stream : streams_) stream->end_window();
  });
}

void Worker::stop() noexcept {
  if (thread_.joinable()) {
    signals_.aborted.store(true, std::memory_order_relaxed);
    post([this] {
      for (auto& stream : streams_) stream->close();
    });
    keep_running_.reset();
    // Closing cancels every pending operation, so run() drains their handlers and returns.
    thread_.join();
  }
  streams_.clear();
}

}  // namespace testio::engine
