// File descriptors: the process's limit, raised as far as it may go, and how many are open. A
// test of thousands of connections needs a descriptor for each on each side.
#pragma once

#include <cstdint>
#include <string>

namespace testio::util {

// Raises RLIMIT_NOFILE's soft limit to the hard limit (a process may, unprivileged); returns the
// soft limit then in force.
std::uint64_t raise_descriptor_limit() noexcept;
std::uint64_t descriptor_limit() noexcept;
// The descriptors this process holds open now (/proc/self/fd).
std::uint64_t descriptors_in_use() noexcept;
// Empty when `needed` more descriptors fit under the limit beside those in use; otherwise one
// sentence saying how many `what` needs and what `ulimit -n` is.
std::string descriptor_shortfall(std::uint64_t needed, const std::string& what);

}  // namespace testio::util
