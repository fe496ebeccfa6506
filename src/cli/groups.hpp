// The command line's options, one file per group: its definitions (under one --help heading), how
// a parsed command line fills the Config from them (only what was typed: the rest keeps the
// spec's defaults, or a profile's spec) and the rules only the command line knows about them.
// options.cpp and validate.cpp run the groups in order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/option_table.hpp"
#include "cli/validate.hpp"
#include "config/config.hpp"
#include "util/units.hpp"

namespace testio::cli {

// The option's text when it was typed (or came from a profile's tokens).
std::optional<std::string> typed(const ParsedOptions& args, const char* name);
// A count that fits 32 bits; throws util::UsageError naming `what`.
std::uint32_t parse_u32(const std::string& text, const char* what);
// A value by its name (`parse` returns nullopt for one it does not know); else `refusal`.
template <typename Enum, typename Parse>
Enum parse_name(const std::string& text, Parse parse, const std::string& refusal) {
  auto value = parse(text);
  if (!value) throw util::UsageError(refusal);
  return *value;
}

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

// rr_options.cpp: --rr and what it sends.
void add_rr_options(OptionTable& options);
void fill_rr(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_rr(const config::Config& config, const GivenOptions& given);

// transfers_options.cpp: --transfers, and where they go.
void add_transfers_options(OptionTable& options);
void fill_transfers(const ParsedOptions& args, config::Config& config, GivenOptions& given);
void check_transfers(const config::Config& config, const GivenOptions& given);

// udp_options.cpp: -u and its fast paths (after the test and tuning groups: its defaults fill
// only what they left unset).
void add_udp_options(OptionTable& options);
void fill_udp(const ParsedOptions& args, config::Config& config, GivenOptions& given, bool profile_names_buffer);
void check_udp(const config::Config& config, const GivenOptions& given);

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
