#include "util/units.hpp"

#include <sched.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace testio::util {
namespace {

struct Suffix {
  std::string_view text;
  double multiplier;
};

// Longest suffixes first so "MiB" is not read as "M" followed by garbage.
constexpr Suffix kSuffixes[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
    {"K", 1024.0},   {"M", 1048576.0},   {"G", 1073741824.0},   {"T", 1099511627776.0},
    {"k", 1024.0},   {"m", 1048576.0},   {"g", 1073741824.0},   {"t", 1099511627776.0},
    {"B", 1.0},      {"", 1.0},
};

std::string quote(std::string_view text) {
  // Built by append: GCC 12 raises a false -Wrestrict on "'" + std::string(...) at -O2.
  std::string quoted(1, '\'');
  quoted.append(text);
  quoted.push_back('\'');
  return quoted;
}

// std::from_chars for double is in libstdc++ 11+; it rejects leading '+' and whitespace, which suits us.
bool parse_decimal(std::string_view text, double& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  for (const Suffix& suffix : kSuffixes) {
    if (text.size() < suffix.text.size() || !text.ends_with(suffix.text)) continue;
    std::string_view number = text.substr(0, text.size() - suffix.text.size());
    double value = 0;
    if (!parse_decimal(number, value)) continue;
    if (value < 0) throw UsageError(std::string(what) + " must not be negative, got " + quote(text));
    double bytes = std::round(value * suffix.multiplier);
    if (bytes >= 18446744073709551615.0)
      throw UsageError(std::string(what) + " is too large: " + quote(text));
    return static_cast<std::uint64_t>(bytes);
  }
  throw UsageError(std::string(what) + " " + quote(text) +
                   " is not a size (examples: 131072, 128K, 2M, 2MiB, 1GB)");
}

double parse_rate(std::string_view text, std::string_view what) {
  double multiplier = 1;
  std::string_view number = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': multiplier = 1e3; break;
      case 'm': case 'M': multiplier = 1e6; break;
      case 'g': case 'G': multiplier = 1e9; break;
      case 't': case 'T': multiplier = 1e12; break;
      default: break;
    }
    if (multiplier != 1) number.remove_suffix(1);
  }
  double value = 0;
  if (!parse_decimal(number, value) || value <= 0)
    throw UsageError(std::string(what) + " " + quote(text) + " is not a rate above 0 (examples: 500M, 10G, 2.5g)");
  return value * multiplier;
}

std::vector<std::uint32_t> parse_cpu_list(std::string_view text, std::string_view what) {
  constexpr std::uint32_t kMaxCpu = 1024;
  auto fail = [&]() -> std::vector<std::uint32_t> {
    throw UsageError(std::string(what) + " " + quote(text) + " is not a CPU list (examples: 2, 0-3, 0,2,4-7)");
  };
  auto number = [&](std::string_view digits) {
    std::uint32_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) fail();
    if (value >= kMaxCpu) throw UsageError(std::string(what) + ": CPU " + std::to_string(value) + " is beyond 1023");
    return value;
  };
  std::vector<std::uint32_t> cpus;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) fail();
    std::size_t dash = item.find('-');
    std::uint32_t first = number(item.substr(0, dash));
    std::uint32_t last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (last < first) fail();
    for (std::uint32_t cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (cpus.size() > kMaxCpu) fail();
  }
  if (cpus.empty()) fail();
  return cpus;
}

std::string format_cpu_list(const std::vector<std::uint32_t>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) text += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

std::vector<std::uint32_t> process_cpus() {
  std::vector<std::uint32_t> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (std::uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

double parse_seconds(std::string_view text, std::string_view what) {
  double value = 0;
  if (!parse_decimal(text, value))
    throw UsageError(std::string(what) + " " + quote(text) + " is not a number of seconds");
  if (value < 0) throw UsageError(std::string(what) + " must not be negative, got " + quote(text));
  return value;
}

std::uint64_t parse_count(std::string_view text, std::string_view what) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    if (text.starts_with('-'))
      throw UsageError(std::string(what) + " must not be negative, got " + quote(text));
    throw UsageError(std::string(what) + " " + quote(text) + " is not a whole number");
  }
  return value;
}

double bits_per_second(std::uint64_t bytes, double seconds) noexcept {
  if (seconds <= 0) return 0;
  return static_cast<double>(bytes) * 8.0 / seconds;
}

namespace {
std::string scaled(double value, const char* const* units, int count, double step) {
  int index = 0;
  while (std::fabs(value) >= step && index + 1 < count) {
    value /= step;
    ++index;
  }
  char text[64];
  std::snprintf(text, sizeof text, index == 0 ? "%.0f %s" : "%.2f %s", value, units[index]);
  return text;
}
}  // namespace

bool is_rate_unit(char unit) noexcept {
  switch (unit) {
    case 'a': case 'k': case 'm': case 'g': case 'K': case 'M': case 'G': return true;
    default: return false;
  }
}

std::string format_rate(double bps, char unit) {
  struct Forced { char unit; double divisor; const char* name; };
  static constexpr Forced kForced[] = {
      {'k', 1e3, "Kbit/s"},   {'m', 1e6, "Mbit/s"},   {'g', 1e9, "Gbit/s"},
      {'K', 8e3, "KByte/s"},  {'M', 8e6, "MByte/s"},  {'G', 8e9, "GByte/s"}};
  for (const Forced& forced : kForced) {
    if (forced.unit != unit) continue;
    char text[64];
    std::snprintf(text, sizeof text, "%.2f %s", bps / forced.divisor, forced.name);
    return text;
  }
  static const char* const units[] = {"bit/s", "Kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
  return scaled(bps, units, 5, 1000.0);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  return scaled(static_cast<double>(bytes), units, 6, 1000.0);
}

std::string format_size(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int index = 0;
  while (index < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++index;
  }
  return std::to_string(bytes) + " " + units[index];
}

std::string printable(std::string_view text, std::size_t max_length) {
  std::string shown;
  for (char c : text.substr(0, max_length)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > max_length ? shown + "..." : shown;
}

}  // namespace testio::util
