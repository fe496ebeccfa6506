#include "options/option_table.hpp"
#include "options/parsing.hpp"

#include <algorithm>
#include <cxxopts.hpp>

#include "util/units.hpp"

namespace testio::options {

ValueSpec value() { return ValueSpec(); }

ValueSpec values() {
  ValueSpec spec;
  spec.list_ = true;
  return spec;
}

std::size_t ParsedOptions::count(const std::string& name) const { return result_->count(name); }

std::string ParsedOptions::value(const std::string& name) const {
  try {
    return (*result_)[name].as<std::string>();
  } catch (const cxxopts::exceptions::exception& error) {
    throw std::out_of_range("option " + name + ": " + error.what());
  }
}

std::vector<std::string> ParsedOptions::values(const std::string& name) const {
  if (!result_->count(name)) return {};
  return (*result_)[name].as<std::vector<std::string>>();
}

std::vector<std::string> ParsedOptions::unmatched() const { return result_->unmatched(); }

GroupAdder& GroupAdder::operator()(const std::string& names, const std::string& help) {
  table_.add(group_, names, help, nullptr, "");
  return *this;
}

GroupAdder& GroupAdder::operator()(const std::string& names, const std::string& help, const ValueSpec& value,
                                   const std::string& arg_name) {
  table_.add(group_, names, help, &value, arg_name);
  return *this;
}

OptionTable::OptionTable(std::string program, std::string description)
    : program_(std::move(program)), options_(std::make_unique<cxxopts::Options>(program_, std::move(description))) {}

OptionTable::OptionTable(OptionTable&&) noexcept = default;
OptionTable::~OptionTable() = default;

void OptionTable::add(const std::string& group, const std::string& names, const std::string& help,
                      const ValueSpec* value, const std::string& arg_name) {
  if (std::find(groups_.begin(), groups_.end(), group) == groups_.end()) groups_.push_back(group);
  std::shared_ptr<cxxopts::Value> parsed_as;
  if (!value) {
    parsed_as = cxxopts::value<bool>();
  } else {
    if (value->list_) {
      parsed_as = cxxopts::value<std::vector<std::string>>();
    } else {
      parsed_as = cxxopts::value<std::string>();
    }
    if (value->default_) parsed_as->default_value(*value->default_);
    if (value->implicit_) parsed_as->implicit_value(*value->implicit_);
  }
  options_->add_options(group)(names, help, parsed_as, arg_name);
}

void OptionTable::positional(const std::string& option, const std::string& usage) {
  options_->positional_help(usage).show_positional_help();
  options_->parse_positional({option});
}

ParsedOptions OptionTable::parse(const std::vector<std::string>& tokens) const {
  std::vector<const char*> argv;
  argv.reserve(tokens.size());
  for (const std::string& token : tokens) argv.push_back(token.c_str());
  ParsedOptions parsed;
  try {
    parsed.result_ = std::make_shared<const cxxopts::ParseResult>(
        options_->parse(static_cast<int>(argv.size()), argv.data()));
  } catch (const cxxopts::exceptions::exception& error) {
    throw util::UsageError(std::string(error.what()) + " (see " + program_ + " --help)");
  }
  return parsed;
}

std::vector<OptionHelp> OptionTable::group_help(const std::string& group) const {
  std::vector<OptionHelp> entries;
  for (const cxxopts::HelpOptionDetails& option : options_->group_help(group).options) {
    OptionHelp entry;
    entry.short_name = option.s;
    entry.long_names.assign(option.l.begin(), option.l.end());
    entry.help = option.desc;
    entry.is_flag = option.is_boolean;
    if (!option.is_boolean) entry.arg_name = option.arg_help;
    if (option.has_default && !option.is_boolean) entry.default_value = option.default_value;
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<std::string> OptionTable::groups() const { return groups_; }

bool OptionTable::has_long_name(const std::string& name) const {
  for (const std::string& group : options_->groups())
    for (const cxxopts::HelpOptionDetails& option : options_->group_help(group).options)
      for (const std::string& long_name : option.l)
        if (long_name == name) return true;
  return false;
}

std::string OptionTable::help(const std::vector<std::string>& groups) const { return options_->help(groups); }

// What every group does with the text typed (options/parsing.hpp).
std::optional<std::string> typed(const ParsedOptions& args, const char* name) {
  if (!args.count(name)) return std::nullopt;
  return args.value(name);
}

std::uint32_t parse_u32(const std::string& text, const char* what) {
  std::uint64_t value = util::parse_count(text, what);
  if (value > 0xffffffffull) throw util::UsageError(std::string(what) + " '" + text + "' is too large");
  return static_cast<std::uint32_t>(value);
}

}  // namespace testio::options
