// From parsed options to a Config. Only what was typed (or given by a profile's tokens) is set:
// everything else keeps the value already there, the spec's own defaults or a profile's spec.
#pragma once

#include <cxxopts.hpp>

#include "cli/validate.hpp"
#include "config/config.hpp"

namespace testio::cli {

// Throws util::UsageError with one sentence for a value it cannot read. `profile_names_buffer`:
// a profile's spec set -l, so the smaller defaults of --iperf3 and a raw sink do not apply.
void fill_config(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given,
                 bool profile_names_buffer);

}  // namespace testio::cli
