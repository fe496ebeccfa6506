#include "engines/worker_pool.hpp"

namespace testio::engines {

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

}  // namespace testio::engines
