// --diagnose's plans: for a verdict, the variations that can confirm or refute it, most telling
// first, each with what it changes and, where the peer cannot run it, why it is skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "report/test_report.hpp"

namespace testio::lifecycle {

// What a variation is expected to show if the verdict is right: more goodput, or the same.
enum class Expect { gain, same };

struct VariationPlan {
  std::string name;
  std::string options;  // as a user would write them: "-P 4", "-A 0-1"
  Expect expect;
  std::function<void(config::Config&)> apply;
  std::string skipped;  // why it cannot run against this peer; empty: it can
  bool doubles_connections = false;  // the one that can tell a per-connection ceiling from the path's
};

// The plans for `limit` of the test `config` ran as `report`; `cpus` are those the process may use
// (pinning spreads the workers over them).
std::vector<VariationPlan> plans_for(const std::string& limit, const config::Config& config, const report::TestReport& report,
                                     const std::vector<std::uint32_t>& cpus);

}  // namespace testio::lifecycle
