#include "workloads/registry.hpp"

#include "util/units.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/http/http.hpp"
#include "workloads/latency/latency.hpp"
#include "workloads/rpm/rpm.hpp"
#include "workloads/rr/rr.hpp"
#include "workloads/transfers/transfers.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::workloads {
namespace {

struct Entry {
  std::string_view name;
  const Workload& (*workload)();
};

// Every workload, under the name the spec (and the wire) gives it.
constexpr Entry kWorkloads[] = {
    {"stream", bulk::workload},
    {"rr", rr::workload},
    {"transfers", transfers::workload},
    {"udp", udp::workload},
    {"http", http::workload},
    {"latency", latency::workload},
    {"rpm", rpm::workload},
};

// Their options groups (the bulk test's are the command line's own: cli/test_options.cpp).
constexpr OptionGroup kOptionGroups[] = {
    {rr::add_options, rr::fill_options, rr::check_options, false},
    {transfers::add_options, transfers::fill_options, transfers::check_options, false},
    {udp::add_options, udp::fill_options, udp::check_options, true},
    {latency::add_options, latency::fill_options, latency::check_options, true},
    {rpm::add_options, rpm::fill_options, rpm::check_options, true},
};

}  // namespace

std::span<const OptionGroup> option_groups() noexcept { return kOptionGroups; }

const Workload* find(std::string_view name) noexcept {
  for (const Entry& entry : kWorkloads)
    if (entry.name == name) return &entry.workload();
  return nullptr;
}

const Workload& of(const spec::TestSpec& spec) {
  const Workload* workload = find(spec.workload);
  if (!workload) throw spec::SpecError("workload \"" + util::printable(spec.workload) + "\" is not supported");
  return *workload;
}

bool datagrams(const spec::TestSpec& spec) noexcept {
  const Workload* workload = find(spec.workload);
  return workload && workload->datagrams();
}

namespace {

std::string describe_one(const spec::TestSpec& spec) {
  std::string what = std::to_string(spec.connections);
  what.append(spec.connections == 1 ? " connection" : " connections");
  if (spec.direction != spec::Direction::forward) what.append(" ").append(spec::to_string(spec.direction));
  const Workload* workload = find(spec.workload);
  const std::string extent = workload ? workload->extent(spec) : std::string();
  if (!extent.empty()) return what.append(", ").append(extent);
  if (spec.total_bytes) return what.append(", ").append(util::format_bytes(spec.total_bytes));
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, ", %g s", spec.duration_s);
  return what.append(seconds);
}

// A workload's settings are the ones its part has (a request names no other).
void check_settings(const spec::TestSpec& spec, const Workload& workload) {
  for (const spec::Setting& setting : spec.settings)
    if (!workload.takes_setting(setting.name))
      throw spec::SpecError("field \"" + util::printable(setting.name) + "\" is not a setting of the " +
                            util::printable(spec.workload) + " workload");
}

// What ends a workload when not the window is its own count (--num, --transfers; its extent()),
// which a workload beside others may not have.
void check_side_by_side(const std::vector<spec::TestSpec>& parts) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Workload* workload = find(parts[k].workload);
    if (!workload || workload->extent(parts[k]).empty()) continue;
    if (k == 0)
      throw spec::SpecError("workloads run side by side only for a time (-t): a counted test (-n, --num, --transfers, "
                            "a URL) runs alone");
    throw spec::SpecError("workload " + std::to_string(k + 1) + " (" + util::printable(parts[k].workload) +
                          ") is counted (--num, --transfers): workloads side by side run for a time");
  }
}

}  // namespace

void keep_own_settings(spec::TestSpec& spec) {
  if (const Workload* workload = find(spec.workload))
    spec.settings.keep_only([&](const std::string& name) { return workload->takes_setting(name); });
  for (spec::TestSpec& part : spec.with) keep_own_settings(part);
}

std::string describe(const spec::TestSpec& spec) {
  std::string what = describe_one(spec::workloads_of(spec).front());
  for (const spec::TestSpec& part : spec.with) what += ", with " + part.workload + ": " + describe_one(part);
  return what;
}

void check(const spec::TestSpec& spec, const spec::Limits& limits) {
  spec::check_composition(spec, limits);
  const std::vector<spec::TestSpec> parts = spec::workloads_of(spec);
  if (parts.size() > 1) check_side_by_side(parts);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    try {
      const Workload& workload = of(parts[k]);
      check_settings(parts[k], workload);
      spec::check_common(parts[k], limits);
      workload.check(parts[k], limits);
    } catch (const spec::SpecError& error) {
      if (parts.size() == 1) throw;
      throw spec::SpecError("workload " + std::to_string(k + 1) + " (" + util::printable(parts[k].workload) +
                            "): " + error.what());
    }
  }
}

}  // namespace testio::workloads
