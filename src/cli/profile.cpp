#include "cli/profile.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/units.hpp"

namespace testio::cli {

std::vector<std::string> profile_tokens(const std::string& path,
                                        const std::function<bool(const std::string&)>& accepts,
                                        const std::function<bool(const std::string&)>& given) {
  using util::UsageError;
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read profile " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json profile = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (profile.is_discarded() || !profile.is_object())
    throw UsageError("profile " + path + " is not a JSON object of option names and values");
  std::vector<std::string> tokens;
  for (const auto& [key, value] : profile.items()) {
    if (!accepts(key)) throw UsageError("profile " + path + ": unknown key \"" + key + "\"");
    if (given(key)) continue;
    if (value.is_boolean()) {
      if (value.get<bool>()) tokens.push_back("--" + key);
    } else if (value.is_string()) {
      tokens.push_back("--" + key + "=" + value.get<std::string>());
    } else if (value.is_number_integer() || value.is_number_unsigned()) {
      tokens.push_back("--" + key + "=" + value.dump());
    } else if (value.is_number_float()) {
      tokens.push_back("--" + key + "=" + value.dump());
    } else {
      throw UsageError("profile " + path + ": \"" + key + "\" must be a string, a number or true/false");
    }
  }
  return tokens;
}

}  // namespace testio::cli
