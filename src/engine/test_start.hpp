// What both lifecycles record about a test before data moves (the agreed parameters and, per
// data connection, its endpoints and what the kernel granted the first) and how they hand each
// side's figures to the reporters.
#pragma once

#include <cstdint>
#include <vector>

#include <asio/ip/tcp.hpp>

#include "control/protocol.hpp"
#include "report/test_report.hpp"

namespace testio::engine {

report::StartInfo start_info(const control::TestRequest& request, unsigned server_threads, bool from_client);

// Appends the connection's endpoints; the first connection also gives the socket buffers and MSS.
void note_connection(report::StartInfo& start, asio::ip::tcp::socket& socket);

// The start of one direction's report: `start` less the connections of the other direction.
report::StartInfo direction_start(report::StartInfo start, const std::vector<std::uint32_t>& connections,
                                  bool local_sends);

// One side's figures as the reporters take them.
report::SideReport side_report(control::SideResults results);

}  // namespace testio::engine
