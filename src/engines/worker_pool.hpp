// T workers; streams are dealt round-robin so each worker gets N/T of them. Owner: the
// lifecycle::TestStreams (or the raw sink) that made it, on the control thread.
#pragma once

#include <memory>
#include <vector>

#include "engines/worker.hpp"

namespace testio::engines {

class WorkerPool {
 public:
  // With `cpus` (-A), worker k is pinned to cpus[k % cpus.size()].
  explicit WorkerPool(unsigned threads, const std::vector<std::uint32_t>& cpus = {});
  ~WorkerPool() { stop(); }

  Worker& worker_for_stream(std::uint32_t stream) noexcept;
  // The worker pinned to `cpu`; the least loaded of several, as streams were dealt to them by
  // worker_on_cpu; null when none is.
  Worker* worker_on_cpu(int cpu) noexcept;
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()); }

  void start();
  void begin(TestClock clock);
  void end_window();
  void stop() noexcept;

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::uint32_t> placed_;  // streams worker_on_cpu dealt to each worker
};

}  // namespace testio::engines
