// The client's side of --transfers beyond its streams: the plan every slot shares, the check of
// the --save directory before anything connects, and the summary of the slots' tallies.
#pragma once

#include <memory>

#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "workloads/transfers/transfers_section.hpp"
#include "workloads/transfers/transfer_streams.hpp"

namespace testio::workloads::transfers {

std::unique_ptr<TransferPlan> make_transfer_plan(const config::Config& config, const spec::TestSpec& spec,
                                                const asio::ip::tcp::endpoint& server);

// Throws std::runtime_error (one sentence) when DIR is not a writable directory or, without
// --force, already holds a file this test would write.
void check_save_directory(const config::Config& config, std::uint64_t transfers);

TransfersSummary summarize_transfers(const TransferPlan& plan, const TransferTally* tallies, std::uint32_t slots,
                                     double seconds);

}  // namespace testio::workloads::transfers
