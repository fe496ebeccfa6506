#include "workloads/transfers/transfers.hpp"

#include <memory>
#include <vector>

#include "util/log.hpp"
#include "util/pattern.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfer_plan.hpp"
#include "workloads/transfers/transfer_streams.hpp"

namespace testio::workloads::transfers {
namespace {

using asio::ip::tcp;

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

// The server sends on every connection; the slots are the "forward" connections of the wire.
DirectionLayout slots_of(const spec::TestSpec& spec) { return {spec.connections, 0, /*client_sends_forward=*/false}; }

// One TransferClient per slot, taking transfer numbers from the plan they share. Owner: the
// lifecycle (control thread); each tally is written by its slot's worker and read once they stopped.
// What ends a test of transfers, in the report's words.
std::string transfers_extent(const spec::TestSpec& spec) {
  const TransfersSpec transfers = part_of<TransfersSpec>(spec);
  return std::to_string(transfers.count) + " transfers of " + util::format_size(transfers.size) +
         " from the server on " + (transfers.reuse ? "kept" : "fresh") + " connections";
}

class DownloadSide final : public TestSide {
 public:
  DownloadSide(const config::Config& config, const spec::TestSpec& spec)
      : config_(config), spec_(spec), tallies_(std::make_unique<TransferTally[]>(spec.connections)) {
    if (!config.save_dir.empty()) check_save_directory(config, part_of<TransfersSpec>(spec).count);
  }

  DirectionLayout layout() const override { return slots_of(spec_); }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }
  void describe_start(report::StartInfo& start) const override { start.extent = transfers_extent(spec_); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    if (!plan_) plan_ = make_transfer_plan(config_, spec_, place.server);
    return std::make_unique<TransferClient>(place.worker.context(), place.counters, *plan_, place.preamble,
                                            tallies_[place.index], std::move(place.done),
                                            place.worker.scratch(plan_->read_size));
  }

  void add_to_report(report::TestReport& report) const override {
    if (!plan_) return;
    TransfersSummary summary = summarize_transfers(*plan_, tallies_.get(), spec_.connections, report.local().wall_s);
    if (summary.partial_files_removed)
      spdlog::warn("removed {} partially written files under {}", summary.partial_files_removed, config_.save_dir);
    report.sections.push_back(std::make_shared<TransfersSection>(std::move(summary)));
  }

  std::string failure(const report::TestReport& report) const override {
    const auto* section = report.section<TransfersSection>();
    if (!section) return {};
    const TransfersSummary& done = section->summary();
    if (done.completed == done.requested) return {};
    return std::to_string(done.completed) + " of " + std::to_string(done.requested) + " transfers completed; " +
           (done.first_error.empty() ? "the rest did not start" : done.first_error);
  }

 private:
  const config::Config& config_;
  spec::TestSpec spec_;
  std::unique_ptr<TransferPlan> plan_;  // made with the first slot, once the server's address is known
  std::unique_ptr<TransferTally[]> tallies_;
};

// One TransferSource per slot; each connection that names a slot goes to its source. Owner: the
// lifecycle (control thread); the sources belong to their workers.
class ServeSide final : public TestSide {
 public:
  ServeSide(const spec::TestSpec& spec, const util::MappedFile* served)
      : spec_(spec), transfers_(part_of<TransfersSpec>(spec)) {
    if (served && transfers_.size > served->size())
      throw std::runtime_error("this server serves " + served->path() + " (" + std::to_string(served->size()) +
                               " bytes): a transfer of " + std::to_string(transfers_.size) + " bytes is larger");
    // Each transfer is a prefix of the served file, or a generated block repeated.
    if (served) {
      payload_ = served->data();
      payload_size_ = served->size();
    } else {
      generated_ = util::make_pattern(spec.buffer);
      payload_ = generated_.data();
      payload_size_ = spec.buffer;
    }
  }

  DirectionLayout layout() const override { return slots_of(spec_); }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }
  void describe_start(report::StartInfo& start) const override { start.extent = transfers_extent(spec_); }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket>) override {
    auto source = std::make_unique<TransferSource>(place.counters, payload_, payload_size_, spec_.buffer,
                                                   transfers_.size, transfers_.reuse, std::move(place.done));
    if (sources_.size() <= place.index) sources_.resize(place.index + 1, nullptr);
    sources_[place.index] = source.get();
    return source;
  }

  std::string route(std::uint32_t slot, tcp::socket socket, engines::Worker& worker) override {
    if (slot >= sources_.size() || !sources_[slot])
      return "slot " + std::to_string(slot) + " is beyond the test's " + std::to_string(spec_.connections) +
             " connections";
    auto owned = std::make_shared<tcp::socket>(std::move(socket));
    worker.post([source = sources_[slot], owned] { source->serve(std::move(*owned)); });
    return {};
  }

 private:
  spec::TestSpec spec_;
  TransfersSpec transfers_;
  util::PageBuffer generated_;
  const char* payload_ = nullptr;
  std::size_t payload_size_ = 0;
  std::vector<TransferSource*> sources_;  // by slot; owned by their workers
};

class Transfers final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    check_download_count(spec, limits);
    const std::uint64_t size = part_of<TransfersSpec>(spec).size;
    if (size == 0) refuse("--size must be at least 1 byte");
    if (size > limits.max_transfer_size)
      refuse("--size " + util::format_size(size) + " is above the cap of " + util::format_size(limits.max_transfer_size));
  }

  std::string extent(const spec::TestSpec& spec) const override { return transfers_extent(spec); }
  bool takes_setting(std::string_view name) const override { return part_has<TransfersSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return std::make_unique<DownloadSide>(config, spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources& resources) const override {
    return std::make_unique<ServeSide>(spec, resources.served_file);
  }
};

}  // namespace

const Workload& workload() {
  static const Transfers transfers;
  return transfers;
}

}  // namespace testio::workloads::transfers
