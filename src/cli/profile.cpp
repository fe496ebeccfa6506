#include "cli/profile.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/mapped_file.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

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

// A spec written before a workload's settings became one object (protocol 2's reports, profiles
// written by hand) says them beside the spec's own fields: those its workload takes move into
// "settings", so an older report still runs the same test again.
json lift_flat_settings(json spec) {
  if (!spec.is_object()) return spec;
  const json workload_name = spec.value("workload", json("stream"));
  const workloads::Workload* workload =
      workload_name.is_string() ? workloads::find(workload_name.get<std::string>()) : nullptr;
  const bool settings_object = !spec.contains("settings") || spec["settings"].is_object();
  if (workload && settings_object) {
    std::vector<std::string> flat;
    for (const auto& [name, value] : spec.items())
      if (name != "settings" && workload->takes_setting(name)) flat.push_back(name);
    for (const std::string& name : flat) {
      spec["settings"][name] = std::move(spec[name]);
      spec.erase(name);
    }
  }
  if (auto with = spec.find("with"); with != spec.end() && with->is_array())
    for (json& entry : *with) entry = lift_flat_settings(std::move(entry));
  return spec;
}

void read_spec(const std::string& path, const json& spec, Profile& profile) {
  try {
    profile.spec = spec::spec_from_json(lift_flat_settings(spec), spec::Presence::any);
  } catch (const spec::SpecError& error) {
    throw UsageError("profile " + path + ": its spec: " + error.what());
  }
  profile.names_buffer = spec.contains("buffer");
  // A spec that counts its test (bytes, or the workload's own count: messages, transfers) and
  // names no window has none.
  const workloads::Workload* workload = workloads::find(profile.spec->workload);
  bool counted = profile.spec->total_bytes > 0;
  try {
    counted = counted || (workload && !workload->extent(*profile.spec).empty());
  } catch (const spec::SpecError& error) {
    throw UsageError("profile " + path + ": its spec: " + error.what());
  }
  if (counted && !spec.contains("duration_s")) profile.spec->duration_s = 0;
}

}  // namespace

Profile read_profile(const std::string& path, const std::function<bool(const std::string&)>& accepts,
                     const std::function<bool(const std::string&)>& given) {
  std::optional<std::string> text = util::read_whole_file(path);
  if (!text) throw UsageError("cannot read profile " + path + ": " + std::strerror(errno));
  json document = json::parse(*text, nullptr, /*allow_exceptions=*/false);
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
