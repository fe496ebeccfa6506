#include "options/parsing.hpp"

namespace testio::options {

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
