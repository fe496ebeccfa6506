// The kernel's TCP extension counters (/proc/net/netstat's "TcpExt:" rows: retransmits, drops,
// SACK and ECN events, listen overflows...), read before and after a test so a diagnosis can say
// which of them moved. Pure parsing, and a reader that takes a root directory so tests can point
// at a fake tree. Any thread: nothing is shared; a read opens the file anew (not for hot paths).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace testio::net {

// One named counter of /proc/net/netstat's TcpExt section.
struct NamedCounter {
  std::string name;
  std::uint64_t value = 0;
};

// Every field of the "TcpExt:" header line with the value in the line after it, in file order.
// Malformed text (no TcpExt pair, counts differ, a value not a number) gives what could be read, possibly empty.
std::vector<NamedCounter> parse_tcp_ext(std::string_view netstat_text);
// Reads ROOT/proc/net/netstat ("" for the real one); empty when it cannot be read.
std::vector<NamedCounter> read_tcp_ext(const std::string& root = "");
// The value of `name` in `counters`, or nullopt when the kernel lacks it.
std::optional<std::uint64_t> find_counter(const std::vector<NamedCounter>& counters, std::string_view name);

}  // namespace testio::net
