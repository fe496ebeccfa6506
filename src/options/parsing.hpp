// What every group of options does with the text typed: was it typed, a count, a name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "options/option_table.hpp"
#include "util/units.hpp"

namespace testio::options {

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

}  // namespace testio::options
