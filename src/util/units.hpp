// Parsing of human sizes and durations, and formatting of rates and byte counts.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace testio::util {

// Thrown for input a user typed that cannot be understood; main() turns it into exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "2097152", "512K", "2M", "2MiB", "1G", "1.5M", "2MB".
// K/M/G/T alone and KiB/MiB/GiB/TiB are binary (the iperf convention for buffer sizes);
// KB/MB/GB/TB are decimal. Throws UsageError naming `what` when the text does not parse.
std::uint64_t parse_size(std::string_view text, std::string_view what);

// Seconds as a decimal number ("10", "0.5"); must be finite and not negative.
double parse_seconds(std::string_view text, std::string_view what);

// Non-negative integer with no suffix.
std::uint64_t parse_count(std::string_view text, std::string_view what);

// A rate in bits per second, decimal as iperf's -b: "500M", "10G", "2.5g", "1000000"; k, m, g, t
// in either case are powers of 1000.
double parse_rate(std::string_view text, std::string_view what);

// A CPU list as taskset and cpuset write it: "0-3,8,10-11". Each CPU below 1024, at most 1024.
std::vector<std::uint32_t> parse_cpu_list(std::string_view text, std::string_view what);
std::string format_cpu_list(const std::vector<std::uint32_t>& cpus);
// The CPUs this process may run on, ascending: taskset or a cgroup may leave it fewer than the
// host has. Empty only if the kernel refuses to say.
std::vector<std::uint32_t> process_cpus();

double bits_per_second(std::uint64_t bytes, double seconds) noexcept;

// Decimal, auto-scaled: "18.70 Gbit/s", "950.12 Mbit/s". `unit` forces one, as iperf's -f:
// 'k', 'm', 'g' for Kbit/s, Mbit/s, Gbit/s; 'K', 'M', 'G' for KByte/s, MByte/s, GByte/s
// (decimal); 'a' (or anything else) scales automatically.
std::string format_rate(double bits_per_second, char unit = 'a');
bool is_rate_unit(char unit) noexcept;
// Decimal, auto-scaled: "66.60 GB", "2.10 MB", "512 B".
std::string format_bytes(std::uint64_t bytes);
// Binary, for buffer sizes the user typed in binary units: "2 MiB", "128 KiB", "1000 B".
std::string format_size(std::uint64_t bytes);

// Text from a peer fit for one log line: control and non-ASCII bytes become '?', and more than
// `max_length` bytes end in "...".
std::string printable(std::string_view text, std::size_t max_length = 64);

}  // namespace testio::util
