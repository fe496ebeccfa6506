#include "workloads/registry.hpp"

#include "util/units.hpp"
#include "workloads/bulk/bulk.hpp"
#include "workloads/http/http.hpp"
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
};

}  // namespace

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

void check(const spec::TestSpec& spec, const spec::Limits& limits) {
  const Workload& workload = of(spec);
  spec::check_common(spec, limits);
  workload.check(spec, limits);
}

}  // namespace testio::workloads
