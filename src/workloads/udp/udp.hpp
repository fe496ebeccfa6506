// -u: UDP flows, N each way as a bulk test's connections, over the same workers (workload "udp").
#pragma once

#include "workloads/workload.hpp"

namespace testio::workloads::udp {

const Workload& workload();

}  // namespace testio::workloads::udp
