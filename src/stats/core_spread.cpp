#include "stats/core_spread.hpp"

#include <charconv>

#include "util/mapped_file.hpp"

namespace testio::stats {
namespace {

bool next_number(std::string_view& rest, std::uint64_t& value) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (error != std::errc()) return false;
  rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  return true;
}

bool parse_line(std::string_view line, CpuTicks& ticks) {
  if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] < '0' || line[3] > '9') return false;
  line.remove_prefix(3);
  std::uint64_t cpu = 0;
  if (!next_number(line, cpu) || cpu >= kMaxCores) return false;
  ticks.cpu = static_cast<std::uint32_t>(cpu);
  // Older kernels stop after iowait/irq/softirq; missing trailing fields stay 0.
  std::uint64_t* fields[] = {&ticks.user, &ticks.nice, &ticks.system, &ticks.idle,
                             &ticks.iowait, &ticks.irq, &ticks.softirq, &ticks.steal};
  std::size_t parsed = 0;
  for (std::uint64_t* field : fields) {
    if (!next_number(line, *field)) break;
    ++parsed;
  }
  return parsed >= 4;
}

}  // namespace

std::vector<CpuTicks> parse_proc_stat(std::string_view text) {
  std::vector<CpuTicks> cpus;
  while (!text.empty() && cpus.size() < kMaxCores) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    CpuTicks ticks;
    if (parse_line(line, ticks)) cpus.push_back(ticks);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return cpus;
}

std::vector<CpuTicks> read_proc_stat(const std::string& root) {
  return parse_proc_stat(util::read_whole_file(root + "/proc/stat").value_or(""));
}

std::vector<CoreShare> core_shares(const std::vector<CpuTicks>& before, const std::vector<CpuTicks>& after) {
  std::vector<CoreShare> shares;
  for (const CpuTicks& now : after) {
    for (const CpuTicks& then : before) {
      if (then.cpu != now.cpu) continue;
      // Counters only grow; a CPU that went offline and back may restart lower: skip it.
      if (now.total() <= then.total() || now.busy() < then.busy() || now.softirq < then.softirq) break;
      double elapsed = static_cast<double>(now.total() - then.total());
      shares.push_back({now.cpu, static_cast<double>(now.busy() - then.busy()) / elapsed,
                        static_cast<double>(now.softirq - then.softirq) / elapsed});
      break;
    }
  }
  return shares;
}

}  // namespace testio::stats
