// The command line's options, one file per group: its definitions (under one --help heading), how
// a parsed command line fills the Config from them (only what was typed: the rest keeps the
// spec's defaults, or a profile's spec) and the rules only the command line knows about them.
// options.cpp runs the groups in order: first filling the Config, then checking it (validate()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "options/given.hpp"
#include "options/option_table.hpp"
#include "options/parsing.hpp"
#include "util/units.hpp"

namespace testio::cli {

using options::GivenOptions;
using options::OptionTable;
using options::ParsedOptions;
using options::parse_name;
using options::parse_u32;
using options::typed;
using options::value;
using options::values;

// general_options.cpp: the role, addresses, output, a server's caps and keys.
void add_general_options(OptionTable& options);
void fill_general(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_general(const config::Config& config, const GivenOptions& given);

// test_options.cpp: the test a client asks for (count, extent, sizes, modes, direction, NICs)
// and --iperf3.
void add_test_options(OptionTable& options);
void fill_test(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_test(const config::Config& config, const GivenOptions& given);

// tuning_options.cpp: -C, -M, -N, -A, --cport, pacing, --no-lowat.
void add_tuning_options(OptionTable& options);
void fill_tuning(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_tuning(const config::Config& config, const GivenOptions& given);

// The workloads' own groups (--rr, --transfers and URLs, -u) live in their folders
// (workloads/NAME/NAME_options.cpp) and come through workloads::option_groups().

// metrics_options.cpp: --metrics (server) and --prometheus (client).
void add_metrics_options(OptionTable& options);
void fill_metrics(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_metrics(const config::Config& config, const GivenOptions& given);

// mesh_options.cpp: --mesh and its schedule.
void add_mesh_options(OptionTable& options);
void fill_mesh(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_mesh(const config::Config& config, const GivenOptions& given);

// raw_options.cpp: --raw, -F and --hash.
void add_raw_options(OptionTable& options);
void fill_raw(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_raw(const config::Config& config, const GivenOptions& given);

}  // namespace testio::cli
