// One side's data streams of a test: the workers that run them, the streams a workload made on
// them, their measurement by direction, and a latch per direction that says when they have all
// ended. Both testio lifecycles and iperf3's sessions run their streams through it. Owner: the
// control thread; the streams themselves belong to their workers.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/completion_latch.hpp"
#include "engines/worker_pool.hpp"
#include "lifecycle/directions.hpp"
#include "net/asio_fwd.hpp"
#include "workloads/workload.hpp"

namespace testio::lifecycle {

class TestStreams {
 public:
  // `spec` gives the intervals, the omit and the window, and --iface-stats.
  // With --rx-affinity follow the workers are pinned (to `cpus`, else to the CPUs this process may
  // use, one each) and the streams that `local` receives on go to the worker on their packets' CPU.
  TestStreams(const asio::any_io_executor& control, const workloads::DirectionLayout& layout, unsigned threads,
              const std::vector<std::uint32_t>& cpus, const spec::TestSpec& spec,
              workloads::Side local = workloads::Side::client);
  ~TestStreams();
  TestStreams(const TestStreams&) = delete;
  TestStreams& operator=(const TestStreams&) = delete;

  const workloads::DirectionLayout& layout() const noexcept { return measurement_.layout(); }
  DirectedMeasurement& measurement() noexcept { return measurement_; }
  unsigned threads() const noexcept { return pool_.size(); }
  // The worker connection `i` is dealt to, and `socket` moved onto that worker's io_context.
  engines::Worker& worker_for(std::uint32_t i) noexcept { return pool_.worker_for_stream(i); }
  net::TcpSocket move_to_worker(std::uint32_t i, net::TcpSocket socket);

  // Has `side` make connection i's stream and adds it to its worker; `socket` (when the workload's
  // connections come before the start) moves there first, and its TCP_INFO is sampled. A client's
  // streams that connect by themselves are told where to and what to say (`server`, `preamble`).
  // `test_id` is the server's id of the test (a UDP flow's hello names it).
  void add(workloads::TestSide& side, std::uint32_t i, std::optional<net::TcpSocket> socket,
           const net::TcpEndpoint& server, const std::array<unsigned char, 24>& preamble,
           std::uint64_t test_id);

  // A flow whose socket was set up elsewhere (iperf3's UDP handshake): `socket` moves onto the
  // worker of connection i, whose stream (add() first) takes it. Empty when taken, else why not.
  std::string route_flow(workloads::TestSide& side, std::uint32_t i, net::UdpSocket socket);

  // Client: the server's clock less this one's, as estimated; the streams made after get it.
  void set_clock_offset(std::int64_t offset_ns) noexcept { clock_offset_ns_ = offset_ns; }
  // A composed test: the number the peer knows connection 0 by (the workloads before this one's
  // connections); the streams made after get it.
  void number_from(std::uint32_t first) noexcept { first_number_ = first; }
  void start() { pool_.start(); }
  void begin(const engines::TestClock& clock);
  // Ends every stream's window now, as its deadline would.
  void end_window() { pool_.end_window(); }
  // True once every stream has ended; false when `limit` passed first.
  net::Awaitable<bool> all_done(std::chrono::steady_clock::duration limit);
  // The streams of one direction (iperf3 waits for its senders and its receivers apart).
  engines::CompletionLatch& done(bool forward_direction) noexcept { return *done_[forward_direction ? 0 : 1]; }
  std::size_t remaining() const noexcept { return done_[0]->remaining() + done_[1]->remaining(); }
  // Closes every stream and joins the workers; the counters stay readable.
  void stop() noexcept { pool_.stop(); }

 private:
  DirectedMeasurement measurement_;
  std::optional<std::vector<std::string>> iface_stats_;
  bool rx_follow_ = false;
  double begins_s_ = 0, ends_s_ = 0;  // where this workload's streams run in the window
  std::int64_t clock_offset_ns_ = 0;
  std::uint32_t first_number_ = 0;
  workloads::Side local_;
  std::array<std::shared_ptr<engines::CompletionLatch>, 2> done_;  // forward, reverse
  engines::WorkerPool pool_;  // last: its workers stop before the counters and latches go
};

}  // namespace testio::lifecycle
