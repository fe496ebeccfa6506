#include "workloads/transfers/transfer_plan.hpp"

#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "util/units.hpp"

#include "workloads/workload.hpp"

namespace testio::workloads::transfers {

std::unique_ptr<TransferPlan> make_transfer_plan(const config::Config& config, const spec::TestSpec& spec,
                                                const asio::ip::tcp::endpoint& server) {
  auto plan = std::make_unique<TransferPlan>();
  plan->server = server;
  if (!config.bind_address.empty()) plan->source = asio::ip::make_address(config.bind_address);
  plan->device = config.bind_device;
  const TransfersSpec transfers = part_of<TransfersSpec>(spec);
  plan->count = transfers.count;
  plan->size = transfers.size;
  plan->read_size = static_cast<std::size_t>(spec.buffer);
  plan->window = spec.window;
  plan->reuse = transfers.reuse;
  plan->save_dir = config.save_dir;
  plan->force = config.force;
  return plan;
}

void check_save_directory(const config::Config& config, std::uint64_t transfers) {
  namespace fs = std::filesystem;
  const std::string& dir = config.save_dir;
  check_writable_directory(dir);
  std::error_code error;
  if (config.force) return;
  // Walk the directory rather than probing each of COUNT names: COUNT may be millions.
  const std::string first = transfer_file_name(dir, transfers, 0);
  const std::size_t name_length = first.size() - dir.size() - 1;
  std::uint64_t clashes = 0;
  std::string example;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != name_length || name.rfind("transfer-", 0) != 0) continue;
    const std::string digits = name.substr(9);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::uint64_t number = std::stoull(digits);
    if (number < 1 || number > transfers) continue;
    if (clashes++ == 0) example = entry.path().string();
  }
  if (clashes)
    throw std::runtime_error(example + (clashes > 1 ? " and " + std::to_string(clashes - 1) + " more files" : "") +
                             " would be overwritten; --force allows it");
}

TransfersSummary summarize_transfers(const TransferPlan& plan, const TransferTally* tallies, std::uint32_t slots,
                                     double seconds) {
  TransfersSummary summary;
  summary.requested = plan.count;
  summary.size = plan.size;
  summary.concurrency = slots;
  summary.reuse = plan.reuse;
  summary.saved_to = plan.save_dir;
  summary.seconds = seconds;
  stats::LatencyHistogram connect, connect_seen, transfer;
  for (std::uint32_t i = 0; i < slots; ++i) {
    connect.merge(tallies[i].connect_ns);
    connect_seen.merge(tallies[i].connect_seen_ns);
    transfer.merge(tallies[i].transfer_ns);
    summary.completed += tallies[i].completed;
    summary.failed += tallies[i].failed;
    summary.partial_files_removed += tallies[i].partial_files_removed;
    if (summary.first_error.empty()) summary.first_error = tallies[i].first_error;
  }
  summary.connect = stats::summarize(connect);
  summary.connect_seen = stats::summarize(connect_seen);
  summary.transfer = stats::summarize(transfer);
  if (seconds > 0) {
    summary.transfers_per_second = static_cast<double>(summary.completed) / seconds;
    summary.bits_per_second = util::bits_per_second(summary.completed * plan.size, seconds);
  }
  return summary;
}

}  // namespace testio::workloads::transfers
