// iperf3 3.21's command line, as scripts type it: every option of its `longopts` table and its
// manual, with what testio does with it. One table says it all: the options testio lacks are
// registered from it, their meaning is applied from it, and docs/iperf3-options.md is printed from
// it (`testio --iperf3-options`), so the list and the page cannot drift.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cli/groups.hpp"

namespace testio::cli {

enum class Iperf3Fit {
  same,     // testio's option of the same name does what iperf3's does
  mapped,   // accepted, and does testio's equivalent
  differs,  // the letter is testio's own: what it means, and the name that does iperf3's
  refused,  // one sentence that names what to use instead
};

struct Iperf3Option {
  std::string_view short_name;  // "S", or empty
  std::string_view long_name;   // "tos"
  std::string_view argument;    // iperf3's placeholder ("n[KMGT]"), empty for a flag
  Iperf3Fit fit;
  std::string_view testio;      // what testio does with it; for refused, the sentence
  bool registered_here = false; // added to the table by this file (else testio already has the name)
};

std::span<const Iperf3Option> iperf3_options();

// The group "iperf3" (--help lists it), and the options iperf3 has that testio refuses.
void add_iperf3_options(OptionTable& options);
// After every other group: maps iperf3's options onto the Config, refuses the others.
void fill_iperf3(const ParsedOptions& args, config::Config& config, GivenOptions& given);

// The table as Markdown (docs/iperf3-options.md).
std::string iperf3_options_markdown();

}  // namespace testio::cli
