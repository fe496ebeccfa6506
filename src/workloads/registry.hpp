// The workloads by the name a spec gives (spec.workload): adding one is a folder here and one line
// in registry.cpp.
#pragma once

#include <span>
#include <string_view>

#include "config/config.hpp"
#include "options/given.hpp"
#include "options/option_table.hpp"

#include "spec/test_spec.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads {

// A workload's group of options, from its folder: its --help heading's options, how they fill a
// Config (only what was typed), and the rules only the command line knows about them.
struct OptionGroup {
  void (*add)(options::OptionTable& table);
  void (*fill)(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given);
  void (*check)(const config::Config& config, const options::GivenOptions& given);
  bool after_the_test;  // fills after the test's and the tuning's groups: its defaults take what they left
};

// Every workload's options group, in --help's order.
std::span<const OptionGroup> option_groups() noexcept;

// Null when no workload has that name.
const Workload* find(std::string_view name) noexcept;

// Every rule a test keeps: spec::check_composition() and, for each of its workloads,
// spec::check_common() and the workload's own. The client calls it before
// it connects, the server on each request. Throws spec::SpecError with one sentence.
void check(const spec::TestSpec& spec, const spec::Limits& limits);

// "8 connections reverse, 5 s" for a log line, in each workload's words; a composed test's other
// workloads follow ("..., with rr: 1 connection, 5 s").
std::string describe(const spec::TestSpec& spec);

// Drops the settings that `spec`'s workloads do not take: a profile from an older report (whose
// every spec had rr's and transfers' fields), or one whose workload the command line changed.
void keep_own_settings(spec::TestSpec& spec);

// Whether the workload `spec` names (checked or not) sends datagrams: false for an unknown name.
bool datagrams(const spec::TestSpec& spec) noexcept;

// The workload a checked spec names (a composed test's first; workloads_of() gives the others).
const Workload& of(const spec::TestSpec& spec);

}  // namespace testio::workloads
