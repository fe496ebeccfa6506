// A socket driven by blocking calls on its stream's own thread (rr with a thread per connection,
// --engine threads). The calls time out every 100 ms so the loop around them sees the worker's
// BlockingSignals (and its deadline) between calls.
#pragma once

#include <sys/types.h>

#include <chrono>

namespace testio::engines {

inline constexpr std::chrono::milliseconds kBlockingCallLimit{100};

// Clears O_NONBLOCK and sets SO_RCVTIMEO and SO_SNDTIMEO to `limit`.
void make_blocking(int fd, std::chrono::microseconds limit = kBlockingCallLimit) noexcept;

// Sets only SO_SNDTIMEO: a sender shortens it as its deadline nears, so a call cannot overrun it.
void set_send_limit(int fd, std::chrono::microseconds limit) noexcept;

// True when a call returned because its timeout expired or a signal came, not because it failed.
bool timed_out(ssize_t result) noexcept;

}  // namespace testio::engines
