// The workloads of one test on one side, each a part with its own spec, streams, workers,
// measurement and report, run in one window. A test of one workload has one part; a composed
// test (spec.with) one per workload. The lifecycles (client_lifecycle.cpp, server_lifecycle.cpp) start, sample,
// end and report every part together through TestParts; each part's data connections are
// numbered after the parts before it, as the peer numbers them. Owner: the control thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "net/asio_fwd.hpp"
#include "lifecycle/exchange.hpp"
#include "report/reporter.hpp"
#include "report/test_report.hpp"
#include "lifecycle/streams.hpp"
#include "workloads/workload.hpp"

namespace testio::lifecycle {

struct TestPart {
  spec::TestSpec spec;                           // this workload's own (its `with` empty)
  std::unique_ptr<workloads::TestSide> side;     // the workload's part on this side
  workloads::DirectionLayout layout;
  unsigned threads = 1;                          // this part's workers
  std::uint32_t first = 0;                       // its connection 0's number among the test's
  std::unique_ptr<report::Reporter> live;        // the workloads after the first: where their intervals go
  std::unique_ptr<TestStreams> streams;          // from open_streams() on (before `live` goes)
  report::StartInfo start;                       // filled as its connections open
  std::optional<DirectedResults> mine;  // this side's figures, once its streams ended
  std::optional<DirectedResults> theirs;

  std::uint32_t connections() const noexcept { return layout.total(); }
  bool before_start() const noexcept { return side->connections() == workloads::Connections::before_start; }
};

class TestParts {
 public:
  // One part per workload of `spec` (spec::workloads_of()), its side made by `make_side`
  // (which may complete the part's spec, as a client's workload does with -F).
  template <typename MakeSide>
  TestParts(const spec::TestSpec& spec, MakeSide&& make_side) {
    std::vector<spec::TestSpec> specs = spec::workloads_of(spec);
    parts_.reserve(specs.size());
    std::uint32_t first = 0;
    for (std::size_t k = 0; k < specs.size(); ++k) {
      TestPart& part = parts_.emplace_back();
      part.spec = std::move(specs[k]);
      part.side = make_side(k, part.spec);
      add(part, first);
      first += part.connections();
    }
  }

  std::size_t size() const noexcept { return parts_.size(); }
  TestPart& operator[](std::size_t k) noexcept { return parts_[k]; }
  TestPart& front() noexcept { return parts_.front(); }
  auto begin() noexcept { return parts_.begin(); }
  auto end() noexcept { return parts_.end(); }
  auto begin() const noexcept { return parts_.begin(); }
  auto end() const noexcept { return parts_.end(); }

  // The whole test as the peer hears it: the first part's spec with the others as its `with`.
  spec::TestSpec composed_spec() const;
  // Every part's connections together, and every part's workers.
  std::uint32_t connections() const noexcept;
  unsigned threads() const noexcept;
  // The part connection `number` belongs to and its index there; null beyond the last part.
  std::pair<TestPart*, std::uint32_t> locate(std::uint32_t number) noexcept;

  // What a lifecycle does to every part at once, once each part's streams exist.
  // The first workload's intervals go to `reporter` as they close, the others' as with_interval()
  // (`local`: this side, which says which way each workload's shown direction runs).
  void show_live(report::Reporter& reporter, workloads::Side local);
  void begin(const engines::TestClock& clock);
  void end_window();
  // True once every part's streams have ended; false when `limit` passed first.
  net::Awaitable<bool> all_done(std::chrono::steady_clock::duration limit);
  // Samples every part's intervals until cancelled.
  net::Awaitable<void> sample();
  std::size_t remaining() const noexcept;
  void stop() noexcept;

  // The report the reporters take: the first part's, with each other part's in its `with`.
  // `reports` holds one per part, in order.
  static report::TestReport joined(std::vector<report::TestReport> reports);

 private:
  void add(TestPart& part, std::uint32_t first);
  net::Awaitable<void> sample_from(std::size_t k);

  std::vector<TestPart> parts_;
};

}  // namespace testio::lifecycle
