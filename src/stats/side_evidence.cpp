#include "stats/side_evidence.hpp"

#include <algorithm>

#include "net/qdisc_stats.hpp"
#include "stats/core_spread.hpp"
#include "util/units.hpp"

namespace testio::stats {

namespace {

// A side is CPU-bound when the CPUs it may run on are busy, whatever the others do.
std::vector<std::uint32_t> usable_cpus() {
  std::vector<std::uint32_t> cpus = util::process_cpus();
  if (cpus.size() > kMaxCores) cpus.resize(kMaxCores);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

bool names_a_device(const std::string& device) { return !device.empty() && device != "unknown"; }

}  // namespace

void EvidenceWatch::begin(const std::string& device) {
  threads_ = read_threads();
  tcp_ext_ = net::read_tcp_ext();
  device_ = names_a_device(device) ? device : "";
  qdisc_read_ = false;
  nic_drops_.reset();
  if (device_.empty()) return;
  nic_drops_ = net::read_nic_drops(device_);
  if (std::optional<net::QdiscStats> root = net::root_qdisc(net::read_qdiscs(device_))) {
    qdisc_drops_ = root->drops;
    qdisc_overlimits_ = root->overlimits;
    qdisc_read_ = true;
  }
}

SideEvidence EvidenceWatch::finish(std::vector<StreamEnd> streams) const {
  SideEvidence evidence;
  evidence.cpus = usable_cpus();
  evidence.streams = std::move(streams);
  evidence.threads = thread_cpu(threads_, read_threads());
  if (evidence.threads.size() > kMaxEvidenceThreads) evidence.threads.resize(kMaxEvidenceThreads);
  const std::vector<net::NamedCounter> tcp_ext_now = net::read_tcp_ext();
  std::vector<const char*> names(std::begin(kReceiveDropCounters), std::end(kReceiveDropCounters));
  names.push_back(kZeroWindowCounter);
  for (const char* name : names) {
    std::optional<std::uint64_t> before = net::find_counter(tcp_ext_, name);
    std::optional<std::uint64_t> after = net::find_counter(tcp_ext_now, name);
    if (!before || !after)
      evidence.missing.emplace_back(name);
    else
      evidence.tcp_ext.push_back({name, *after >= *before ? *after - *before : 0});
  }
  if (nic_drops_)
    if (std::optional<net::NicDrops> now = net::read_nic_drops(device_)) evidence.nic = {device_, *now - *nic_drops_};
  if (qdisc_read_)
    if (std::optional<net::QdiscStats> root = net::root_qdisc(net::read_qdiscs(device_))) {
      evidence.qdisc.device = device_;
      evidence.qdisc.kind = root->kind;
      // 32-bit kernel counters may wrap over a long test; a wrap shows as the modular difference.
      evidence.qdisc.drops = static_cast<std::uint32_t>(root->drops - qdisc_drops_);
      evidence.qdisc.overlimits = static_cast<std::uint32_t>(root->overlimits - qdisc_overlimits_);
      evidence.qdisc.backlog_bytes = root->backlog_bytes;
    }
  return evidence;
}

double app_limited_share(const std::vector<IntervalRecord>& intervals, std::size_t stream) noexcept {
  std::size_t valid = 0, limited = 0;
  for (const IntervalRecord& record : intervals) {
    if (record.omitted || stream >= record.streams.size() || !record.streams[stream].tcp.valid) continue;
    ++valid;
    if (record.streams[stream].tcp.app_limited) ++limited;
  }
  return valid ? static_cast<double>(limited) / static_cast<double>(valid) : 0;
}

}  // namespace testio::stats
