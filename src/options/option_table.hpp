// The option table: what a command line of testio's accepts, declared by the groups of options,
// and what one command line typed. --help, the manual page and the bash completion are printed
// from it, and profiles are checked against it.
//
// cxxopts parses, but only option_table.cpp includes it: its header brings <regex> and a few
// hundred inline functions that each of the fourteen units of cli/ compiled again at -O3 (a
// third of the binary's compile time went to them), while the groups need only names and text.
// Owner: the main thread, while it parses the command line.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace testio::options {

// How an option takes its argument: one text (the last typed wins), or a list of every one
// typed; with the text it has when not typed, or when typed without "=VALUE".
class ValueSpec {
 public:
  ValueSpec& default_value(std::string text) {
    default_ = std::move(text);
    return *this;
  }
  ValueSpec& implicit_value(std::string text) {
    implicit_ = std::move(text);
    return *this;
  }

 private:
  friend class OptionTable;
  friend ValueSpec value();
  friend ValueSpec values();
  bool list_ = false;
  std::optional<std::string> default_, implicit_;
};

// An option's argument: value() one text, values() every one typed.
ValueSpec value();
ValueSpec values();

// One option as --help, the manual and the completion show it.
struct OptionHelp {
  std::string short_name;               // "p", or empty
  std::vector<std::string> long_names;  // {"port"}
  std::string help;
  std::string arg_name;                 // "PORT"; empty for a flag
  std::optional<std::string> default_value;
  bool is_flag = false;
};

// What one command line typed. Copies share the parse.
class ParsedOptions {
 public:
  // Times `name` was typed (a default does not count).
  std::size_t count(const std::string& name) const;
  // Its text: as typed, else its default. Throws std::out_of_range if it has neither.
  std::string value(const std::string& name) const;
  // Every value typed for a list option (the positional N among them).
  std::vector<std::string> values(const std::string& name) const;
  // Arguments that were no option's and no positional's.
  std::vector<std::string> unmatched() const;

 private:
  friend class OptionTable;
  std::shared_ptr<const cxxopts::ParseResult> result_;
};

class OptionTable;

// Adds options under one --help heading: (names, help) for a flag, (names, help, value, ARG) for
// one that takes an argument. Names are "p,port" or "max-tests".
class GroupAdder {
 public:
  GroupAdder(OptionTable& table, std::string group) : table_(table), group_(std::move(group)) {}
  GroupAdder& operator()(const std::string& names, const std::string& help);
  GroupAdder& operator()(const std::string& names, const std::string& help, const ValueSpec& value,
                         const std::string& arg_name = "");

 private:
  OptionTable& table_;
  std::string group_;
};

class OptionTable {
 public:
  // `program` is the name errors and --help use ("testio", "testio exporter").
  OptionTable(std::string program, std::string description);
  OptionTable(OptionTable&&) noexcept;
  ~OptionTable();

  GroupAdder add_options(const std::string& group) { return GroupAdder(*this, group); }
  // Arguments that are no option's go to list option `option`, shown in --help as `usage`.
  void positional(const std::string& option, const std::string& usage);

  // tokens[0] is the program's name. Throws util::UsageError: cxxopts' sentence, then
  // "(see PROGRAM --help)".
  ParsedOptions parse(const std::vector<std::string>& tokens) const;

  std::vector<OptionHelp> group_help(const std::string& group) const;
  // Whether an option has the long name `name`.
  bool has_long_name(const std::string& name) const;
  // The groups in the order they were first added.
  std::vector<std::string> groups() const;
  std::string help(const std::vector<std::string>& groups) const;

 private:
  friend class GroupAdder;
  void add(const std::string& group, const std::string& names, const std::string& help, const ValueSpec* value,
           const std::string& arg_name);

  std::string program_;
  std::unique_ptr<cxxopts::Options> options_;
  std::vector<std::string> groups_;  // in the order they were first added (cxxopts sorts its own)
};

}  // namespace testio::options
