// --send-mode zerocopy with MSG_ZEROCOPY (asio and threads engines): the kernel reports on the
// socket's error queue which sends it is done with, and whether it copied them after all.
#pragma once

#include "stats/counters.hpp"

namespace testio::engines {

// Reads every notification queued on `fd`'s error queue without blocking and adds them to
// `counters`. Needs SO_ZEROCOPY on the socket.
void drain_zerocopy_completions(int fd, stats::StreamCounters& counters) noexcept;

}  // namespace testio::engines
