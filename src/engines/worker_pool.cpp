#include "engines/worker_pool.hpp"

namespace testio::engines {

WorkerPool::WorkerPool(unsigned threads, const std::vector<std::uint32_t>& cpus) {
  workers_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i)
    workers_.push_back(std::make_unique<Worker>(i, cpus.empty() ? -1 : static_cast<int>(cpus[i % cpus.size()])));
}

Worker& WorkerPool::worker_for_stream(std::uint32_t stream) noexcept {
  return *workers_[stream % workers_.size()];
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

}  // namespace testio::engines
