// "http": COUNT downloads from any HTTP/1.1 server, N at a time (testio -c URL N --transfers
// COUNT). The client's side only: the server is whatever answers the URL, never testio -s.
#pragma once

#include "workloads/workload.hpp"

namespace testio::workloads::http {

const Workload& workload();

}  // namespace testio::workloads::http
