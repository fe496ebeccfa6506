// The command line's own rules, group by group (cli/*_options.cpp: which options go with which
// role, which exclude each other, and what only this side knows), then the rules of the test
// itself: workloads::check(), the function the server applies to every request too.
#include "cli/validate.hpp"

#include "cli/groups.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::cli {

void validate(const config::Config& config, const GivenOptions& given) {
  check_general(config, given);
  check_raw(config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (!group.after_the_test) group.check(config, given);
  check_tuning(config, given);
  check_test(config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (group.after_the_test) group.check(config, given);
  check_metrics(config, given);
  check_mesh(config, given);
  // A profile's "with" (workloads side by side) needs a testio server at the other end.
  if (!config.spec.with.empty()) {
    if (config.role == config::Role::server) throw util::UsageError("\"with\" (workloads side by side) is the client's");
    if (config.raw || config.iperf3 || config.mesh)
      throw util::UsageError(std::string("\"with\" (workloads side by side) needs a testio server: ") +
                             (config.raw ? "--raw" : config.iperf3 ? "--iperf3" : "--mesh") + " runs one workload");
  }
  try {
    workloads::check(config.spec, config.limits);
  } catch (const spec::SpecError& error) {
    throw util::UsageError(error.what());
  }
}

}  // namespace testio::cli
