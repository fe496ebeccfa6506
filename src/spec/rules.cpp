// The rules every test keeps, whatever its workload. Each sentence names the client's option, the
// thing a user can change; a server refusing a request says the same sentence to its client.
#include <cstdio>
#include <string>
#include <utility>

#include "net/nic_counters.hpp"
#include "spec/test_spec.hpp"
#include "util/units.hpp"

namespace testio::spec {
namespace {

constexpr double kMaxRateBps = 1e15;        // 1 Pbit/s: beyond any link, below double's trouble
constexpr double kMinPacedRateBps = 8000;   // 1000 bytes/s: slower than this paces nothing useful
constexpr std::uint32_t kMaxCpu = 1024;

[[noreturn]] void refuse(const std::string& sentence) { throw SpecError(sentence); }

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

void check_connections(const TestSpec& spec, const Limits& limits) {
  if (spec.connections == 0) refuse("the connection count must be at least 1");
  if (spec.connections > limits.max_connections)
    refuse("the connection count " + std::to_string(spec.connections) + " is above the cap of " +
           std::to_string(limits.max_connections) + " (--max-connections)");
  if (spec.direction == Direction::bidir && spec.connections > limits.max_connections / 2)
    refuse("--bidir opens twice the connection count: at most " + std::to_string(limits.max_connections / 2) +
           " each way (--max-connections " + std::to_string(limits.max_connections) + ")");
  if (spec.threads > limits.max_threads)
    refuse("-T " + std::to_string(spec.threads) + " is above the cap of " + std::to_string(limits.max_threads) +
           " threads");
  if (spec.engine == Engine::threads && spec.data_connections() > limits.max_threads)
    refuse("--engine threads runs a thread per data connection, at most " + std::to_string(limits.max_threads) +
           ": " + std::to_string(spec.data_connections()) + " need --engine asio or uring");
}

void check_times(const TestSpec& spec, const Limits& limits) {
  if (spec.duration_s < 0) refuse("-t must not be negative");
  if (spec.duration_s > limits.max_duration_s)
    refuse("-t " + seconds_text(spec.duration_s) + " is above the cap of " + seconds_text(limits.max_duration_s) +
           " seconds");
  if (spec.interval_s < 0 || (spec.interval_s > 0 && spec.interval_s < limits.min_interval_s))
    refuse("-i must be 0 or at least " + seconds_text(limits.min_interval_s) + " seconds");
  if (spec.interval_s > limits.max_duration_s) refuse("-i is above the cap of " + seconds_text(limits.max_duration_s) + " seconds");
  if (spec.omit_s < 0) refuse("-O must not be negative");
  if (spec.omit_s > limits.max_duration_s) refuse("-O is above the cap of " + seconds_text(limits.max_duration_s) + " seconds");
}

void check_sizes(const TestSpec& spec, const Limits& limits) {
  if (spec.buffer == 0) refuse("-l must be at least 1 byte");
  if (spec.buffer > limits.max_buffer)
    refuse("-l " + util::format_size(spec.buffer) + " is above the cap of " + util::format_size(limits.max_buffer));
  if (spec.window > limits.max_window)
    refuse("-w " + util::format_size(spec.window) + " is above the cap of " + util::format_size(limits.max_window));
}

void check_modes(const TestSpec& spec) {
  if (std::string refusal = engine_refusal(spec.engine, spec.recv_mode, spec.send_mode); !refusal.empty())
    refuse(refusal);
  if (spec.engine == Engine::threads && spec.threads)
    refuse("--engine threads runs one thread per connection: drop -T");
  // Both discard the bytes without this process seeing them, so there is nothing to hash.
  if (spec.hash != util::HashKind::none &&
      (spec.recv_mode == RecvMode::trunc || spec.recv_mode == RecvMode::splice))
    refuse("--recv-mode " + std::string(to_string(spec.recv_mode)) +
           " discards the bytes in the kernel, so the server could not hash them");
}

void check_tuning(const TestSpec& spec) {
  if (!(spec.rate_bps >= 0 && spec.rate_bps <= kMaxRateBps) || !(spec.fq_rate_bps >= 0 && spec.fq_rate_bps <= kMaxRateBps))
    refuse("-b, --total-rate and --fq-rate must lie between 0 and 1P bits/s");
  if (spec.rate_bps > 0 && spec.rate_bps < kMinPacedRateBps) refuse("-b must be at least 8k (1000 bytes/s)");
  const std::string& name = spec.congestion;
  if (name.size() > 15 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    refuse("-C '" + util::printable(name) + "' is not a congestion control name (see "
           "/proc/sys/net/ipv4/tcp_available_congestion_control)");
  if (spec.tos > 255) refuse("-S/--tos takes a byte: 0 to 255 (0xff)");
  if (spec.cpus.size() > kMaxCpu) refuse("-A lists more than " + std::to_string(kMaxCpu) + " CPUs");
  for (std::uint32_t cpu : spec.cpus)
    if (cpu >= kMaxCpu) refuse("-A holds CPU numbers 0.." + std::to_string(kMaxCpu - 1));
}

// --server-bitrate-limit: what the client's pacing asks for in all against the server's cap. An
// unpaced test asks for nothing here, as in iperf3: the server's watch (lifecycle/total_rate_cap)
// ends it once it moves more.
void check_total_rate(const TestSpec& spec, const Limits& limits) {
  if (limits.max_total_rate_bps <= 0) return;
  const std::uint32_t connections = spec.data_connections();
  for (const auto& [rate, option] : {std::pair{spec.rate_bps, "-b"}, std::pair{spec.fq_rate_bps, "--fq-rate"}}) {
    const double asked = rate * connections;
    if (asked > limits.max_total_rate_bps)
      refuse(std::string(option) + " " + util::format_rate(rate) + " on " + std::to_string(connections) +
             " connections asks for " + util::format_rate(asked) + " in all, above the server's cap of " +
             util::format_rate(limits.max_total_rate_bps) + " (--server-bitrate-limit)");
  }
}

void check_iface_stats(const TestSpec& spec) {
  if (!spec.iface_stats) return;
  if (spec.iface_stats->size() > net::kMaxNics)
    refuse("--iface-stats watches at most " + std::to_string(net::kMaxNics) + " interfaces");
  for (const std::string& name : *spec.iface_stats)
    if (!net::is_valid_nic_name(name)) refuse("--iface-stats holds '" + util::printable(name) + "', which is not an interface name");
}

}  // namespace

void check_common(const TestSpec& spec, const Limits& limits) {
  check_connections(spec, limits);
  check_times(spec, limits);
  check_sizes(spec, limits);
  check_modes(spec);
  check_tuning(spec);
  check_total_rate(spec, limits);
  check_iface_stats(spec);
}

}  // namespace testio::spec
