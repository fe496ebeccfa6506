// What the client's lifecycle needs for --transfers beyond a bulk test: the shared plan, the check
// of the --save directory before anything connects, and the summary of the slots' tallies.
#pragma once

#include <memory>

#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "report/test_report.hpp"
#include "workloads/tcp_crr.hpp"

namespace testio::engine {

std::unique_ptr<workloads::TransferPlan> make_transfer_plan(const config::Config& config,
                                                            const asio::ip::tcp::endpoint& server);

// Throws std::runtime_error (one sentence) when DIR is not a writable directory or, without
// --force, already holds a file this test would write.
void check_save_directory(const config::Config& config);

report::TransfersSummary summarize_transfers(const workloads::TransferPlan& plan, const workloads::TransferTally* tallies,
                                             std::uint32_t slots, double seconds);

}  // namespace testio::engine
