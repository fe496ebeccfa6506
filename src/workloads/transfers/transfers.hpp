// Connection per transfer ("transfers"): --transfers COUNT downloads of --size bytes, N at a time,
// each on a fresh connection (or, with --reuse, on the connection its slot already has). The
// server sends; the client times each connect and each transfer.
#pragma once

#include "workloads/workload.hpp"

namespace testio::workloads::transfers {

const Workload& workload();

}  // namespace testio::workloads::transfers
