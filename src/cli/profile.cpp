#include "cli/profile.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;
using nlohmann::json;

// The token an option entry stands for; empty for false.
std::string option_token(const std::string& path, const std::string& key, const json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "--" + key : "";
  if (value.is_string()) return "--" + key + "=" + value.get<std::string>();
  if (value.is_number()) return "--" + key + "=" + value.dump();
  throw UsageError("profile " + path + ": \"" + key + "\" must be a string, a number or true/false");
}

void read_spec(const std::string& path, const json& spec, Profile& profile) {
  try {
    profile.spec = spec::spec_from_json(spec, spec::Presence::any);
  } catch (const spec::SpecError& error) {
    throw UsageError("profile " + path + ": its spec: " + error.what());
  }
  profile.names_buffer = spec.contains("buffer");
  // A spec that counts its test (bytes, messages, transfers) and names no window has none.
  const bool counted = profile.spec->total_bytes || profile.spec->rr.messages || profile.spec->transfers.count;
  if (counted && !spec.contains("duration_s")) profile.spec->duration_s = 0;
}

}  // namespace

Profile read_profile(const std::string& path, const std::function<bool(const std::string&)>& accepts,
                     const std::function<bool(const std::string&)>& given) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read profile " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object())
    throw UsageError("profile " + path + " is not a JSON object of option names and values");
  Profile profile;
  // A JSON report of an earlier test: the test it ran, and nothing else.
  if (auto start = document.find("start"); start != document.end() && document.contains("end")) {
    const json* spec = start->is_object() && start->contains("testio") ? &(*start)["testio"] : nullptr;
    if (!spec || !spec->is_object() || !spec->contains("spec"))
      throw UsageError("profile " + path + " is a report without start.testio.spec (from an older testio?)");
    read_spec(path, (*spec)["spec"], profile);
    return profile;
  }
  for (const auto& [key, value] : document.items()) {
    if (key == "spec") {
      read_spec(path, value, profile);
      continue;
    }
    if (!accepts(key)) throw UsageError("profile " + path + ": unknown key \"" + key + "\"");
    if (given(key)) continue;
    if (std::string token = option_token(path, key, value); !token.empty()) profile.tokens.push_back(std::move(token));
  }
  return profile;
}

}  // namespace testio::cli
