// What both lifecycles do with a test before data moves: set up each data connection (buffers,
// tuning), record what the kernel granted and where each connection runs, and hand each side's
// figures to the reporters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lifecycle/exchange.hpp"
#include "net/socket_options.hpp"
#include "report/test_report.hpp"
#include "workloads/layout.hpp"

namespace testio::lifecycle {

report::StartInfo start_info(const spec::TestSpec& spec, unsigned client_threads, unsigned server_threads,
                             bool from_client);

// -C, -N, -M and --fq-rate for a data connection: --fq-rate paces only what a side sends (a
// connection it only reads from keeps its ACKs unpaced); -M is the client's alone (`mss`).
net::TcpTuning data_tuning(const spec::TestSpec& spec, bool sending, std::uint32_t mss = 0);
// -w and the tuning on a data connection (the client's before it connects, so the SYN carries
// them). Returns the clamp warning, or empty. Throws std::runtime_error when the kernel refuses.
std::string tune_data_connection(int fd, const spec::TestSpec& spec, bool sending, std::uint32_t mss = 0);

// The descriptors one side's streams cannot do without: a socket per data connection, a ring per
// io_uring worker, and a few for the rest (the control connection, the listener, the log, a
// sendfile source). --recv-mode splice takes a pipe's two ends more per receiving connection
// where it can, and reads with recv_into where it cannot.
std::uint64_t descriptors_needed(const spec::TestSpec& spec, const workloads::DirectionLayout& layout,
                                 workloads::Side side, unsigned threads);
// Throws std::runtime_error (one sentence: how many, and what ulimit -n is) when they do not fit.
void check_descriptors(const spec::TestSpec& spec, const workloads::DirectionLayout& layout, workloads::Side side,
                       unsigned threads);

// Appends connected socket `fd`'s endpoints; the first connection also gives the socket buffers
// and MSS.
void note_connection(report::StartInfo& start, int fd);

// The start of one direction's report: `start` less the connections of the other direction.
report::StartInfo direction_start(report::StartInfo start, const std::vector<std::uint32_t>& connections,
                                  bool local_sends);

// One side's figures as the reporters take them.
report::SideReport side_report(SideResults results);

}  // namespace testio::lifecycle
