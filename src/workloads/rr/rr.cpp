#include "workloads/rr/rr.hpp"

#include <algorithm>
#include <vector>

#include "workloads/rr/rr_section.hpp"
#include "util/pattern.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/rr/rr_streams.hpp"

namespace testio::workloads::rr {
namespace {

using asio::ip::tcp;

// An echo writes back whatever one read returned, so its buffer is the connection's own: room for
// the messages a client keeps outstanding, at least a few pages, at most 256 KiB.
std::size_t echo_buffer_size(const RrSpec& rr) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(rr.message_size * rr.depth, 4096, 256 * 1024));
}
constexpr std::uint32_t kMaxDepth = 1u << 16;

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

// A connection alone on its worker blocks in send/recv rather than paying an epoll_wait per message.
const engines::BlockingSignals* blocking_if_alone(const StreamPlace& place, std::uint32_t connections) {
  return connections <= place.workers ? &place.worker.signals() : nullptr;
}

// What ends a request/response test (empty: -t), and how each connection runs, in the report's words.
std::string rr_extent(const RrSpec& rr) {
  return rr.messages ? std::to_string(rr.messages) + " messages per connection" : "";
}

void describe_rr(const RrSpec& rr, report::StartInfo& start) {
  start.extent = rr_extent(rr);
  start.call_size = rr.message_size;
  start.manner = "request/response of " + util::format_size(rr.message_size) + ", depth " + std::to_string(rr.depth);
}

// Owner: the lifecycle (control thread); each histogram is written by its connection's worker
// and merged once the workers have stopped.
class RrClientSide final : public TestSide {
 public:
  explicit RrClientSide(const spec::TestSpec& spec)
      : connections_(spec.connections),
        rr_(part_of<RrSpec>(spec)),
        latencies_(std::make_unique<stats::LatencyHistogram[]>(spec.connections)) {}

  DirectionLayout layout() const override { return {connections_, 0}; }
  void describe_start(report::StartInfo& start) const override { describe_rr(rr_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket> socket) override {
    if (payloads_.size() <= place.worker.index()) payloads_.resize(place.worker.index() + 1);
    util::PageBuffer& payload = payloads_[place.worker.index()];
    if (!payload) payload = util::make_pattern(rr_.message_size);
    return std::make_unique<RrClient>(std::move(*socket), place.counters, payload.data(), rr_.message_size, rr_.depth,
                                      rr_.messages, latencies_[place.index],
                                      place.worker.scratch(RrClient::echo_read_size(rr_.message_size)),
                                      std::move(place.done), blocking_if_alone(place, connections_));
  }

  void add_to_report(report::TestReport& report) const override {
    stats::LatencyHistogram all;
    for (std::uint32_t i = 0; i < connections_; ++i) all.merge(latencies_[i]);
    report.sections.push_back(
        std::make_shared<RrSection>(summarize_rr(all, rr_.message_size, rr_.depth, report.local().wall_s)));
  }

 private:
  std::uint32_t connections_;
  RrSpec rr_;
  std::unique_ptr<stats::LatencyHistogram[]> latencies_;  // one per connection
  std::vector<util::PageBuffer> payloads_;                // by worker index
};

class EchoSide final : public TestSide {
 public:
  explicit EchoSide(const spec::TestSpec& spec)
      : rr_(part_of<RrSpec>(spec)), connections_(spec.connections), buffer_size_(echo_buffer_size(rr_)) {}

  DirectionLayout layout() const override { return {connections_, 0}; }
  void describe_start(report::StartInfo& start) const override { describe_rr(rr_, start); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket> socket) override {
    return std::make_unique<TcpEcho>(std::move(*socket), place.counters, buffer_size_, std::move(place.done),
                                     blocking_if_alone(place, connections_));
  }

 private:
  RrSpec rr_;
  std::uint32_t connections_;
  std::size_t buffer_size_;
};

class Rr final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    const RrSpec rr = part_of<RrSpec>(spec);
    const std::uint64_t size = rr.message_size;
    if (size == 0) refuse("--msize must be at least 1 byte");
    if (size > limits.max_buffer)
      refuse("--msize " + util::format_size(size) + " is above the cap of " + util::format_size(limits.max_buffer));
    if (rr.depth < 1 || rr.depth > kMaxDepth) refuse("--depth must be between 1 and 65536");
    if (rr.messages && spec.timed()) refuse("--num and -t exclude each other: count messages or time them");
    if (spec.total_bytes) refuse("-n counts bytes of a bulk test; --rr counts messages with --num");
    check_no_bulk_options(spec);
  }
  std::string extent(const spec::TestSpec& spec) const override { return rr_extent(part_of<RrSpec>(spec)); }
  bool takes_setting(std::string_view name) const override { return part_has<RrSpec>(name); }
  bool answered() const override { return true; }

  std::unique_ptr<TestSide> client(const config::Config&, spec::TestSpec& spec) const override {
    return client_side(spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources&) const override {
    return std::make_unique<EchoSide>(spec);
  }
};

}  // namespace

const Workload& workload() {
  static const Rr rr;
  return rr;
}

std::unique_ptr<TestSide> client_side(const spec::TestSpec& spec) { return std::make_unique<RrClientSide>(spec); }

}  // namespace testio::workloads::rr
