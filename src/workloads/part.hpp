// A workload's own part of the spec, typed. A part is a struct in the workload's folder whose
// static fields(part, visit) names each field once, with its JSON name; the spec carries the
// values by name (spec::Settings) and names no workload. These read and write a part through that
// one list, so a field added to a part is added there and nowhere else (wire, reports, profiles).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "spec/test_spec.hpp"
#include "util/units.hpp"

namespace testio::workloads {

namespace part_detail {

[[noreturn]] inline void wrong(const char* name, const char* what) {
  throw spec::SpecError(std::string("field \"") + name + "\" " + what);
}

inline void read(const spec::SettingValue& value, const char* name, std::uint64_t& out) {
  if (!std::holds_alternative<std::uint64_t>(value)) wrong(name, "must be a whole number >= 0");
  out = std::get<std::uint64_t>(value);
}

inline void read(const spec::SettingValue& value, const char* name, std::uint32_t& out) {
  std::uint64_t wide = 0;
  read(value, name, wide);
  if (wide > UINT32_MAX) wrong(name, "is out of range");
  out = static_cast<std::uint32_t>(wide);
}

inline void read(const spec::SettingValue& value, const char* name, bool& out) {
  if (!std::holds_alternative<bool>(value)) wrong(name, "must be true or false");
  out = std::get<bool>(value);
}

inline void read(const spec::SettingValue& value, const char* name, double& out) {
  if (std::holds_alternative<std::uint64_t>(value)) out = static_cast<double>(std::get<std::uint64_t>(value));
  else if (std::holds_alternative<double>(value) && std::isfinite(std::get<double>(value))) out = std::get<double>(value);
  else wrong(name, "must be a number");
}

inline void read(const spec::SettingValue& value, const char* name, std::string& out) {
  if (!std::holds_alternative<std::string>(value)) wrong(name, "must be a string");
  out = std::get<std::string>(value);
}

inline spec::SettingValue value_of(std::uint32_t value) { return std::uint64_t{value}; }
template <typename T>
spec::SettingValue value_of(const T& value) {
  return value;
}

}  // namespace part_detail

// The part `spec` holds: each field its setting says, the part's default where it says none.
// Throws spec::SpecError (one sentence) for a setting of the wrong kind.
template <typename Part>
Part part_of(const spec::TestSpec& spec) {
  Part part;
  Part::fields(part, [&](const char* name, auto& member) {
    if (const spec::SettingValue* value = spec.settings.find(name)) part_detail::read(*value, name, member);
  });
  return part;
}

// Writes every field of `part` into `spec`'s settings.
template <typename Part>
void set_part(spec::TestSpec& spec, Part part) {
  Part::fields(part, [&](const char* name, auto& member) { spec.settings.set(name, part_detail::value_of(member)); });
}

// Whether `name` is one of the part's fields.
template <typename Part>
bool part_has(std::string_view name) {
  Part part;
  bool found = false;
  Part::fields(part, [&](const char* field, auto&) { found = found || name == field; });
  return found;
}

}  // namespace testio::workloads
