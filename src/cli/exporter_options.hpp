// `testio exporter`'s own command line: where it listens and the caps on what a probe may ask.
#pragma once

#include <string>

#include "options/option_table.hpp"

#include "config/exporter_config.hpp"

namespace testio::cli {

using options::OptionTable;
using options::ParsedOptions;
using options::value;

struct ParsedExporterCommandLine {
  enum class Action { run, help } action = Action::run;
  config::ExporterConfig config;
  std::string help_text;
};

// Whether argv names the exporter (`testio exporter ...`).
bool is_exporter_command(int argc, const char* const* argv);

// Its option table, for --help and the manual (group "Exporter").
OptionTable exporter_options();

// argv as main() has it, "exporter" in argv[1]. Throws util::UsageError with one sentence.
ParsedExporterCommandLine parse_exporter_command_line(int argc, const char* const* argv);

}  // namespace testio::cli
