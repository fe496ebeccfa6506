// The spec's one JSON mapping: fields() names every field once, and the writer and the reader
// below both walk it. A field added to TestSpec is added here, and nowhere else in the mapping.
// The workload's own settings travel as one object, "settings", by the names the workload's part
// gives them (workloads/part.hpp); the mapping carries them without knowing whose they are.
#include <cmath>
#include <cstdint>
#include <variant>

#include <nlohmann/json.hpp>

#include "spec/test_spec.hpp"
#include "util/units.hpp"

namespace testio::spec {
namespace {

using nlohmann::json;

// How a field travels. The wire has carried most of them since protocol version 1; those added
// since travel only when they say something, so a request reads as it did before they existed
// (and a server of an older testio still understands it).
enum class Need {
  required,        // always written; a request without it is broken
  written,         // always written; absent (an older peer) is the default
  unless_default,  // written only when it differs from the default
  with_direction,  // written when the test runs other than forward (what the server's senders need)
};

template <typename Spec, typename Visit>
void fields(Spec& spec, Visit&& visit) {
  // In the order version 1 read them, so a broken request is told about the same field first.
  visit("connections", spec.connections, Need::required);
  visit("total_bytes", spec.total_bytes, Need::required);
  visit("duration_s", spec.duration_s, Need::required);
  visit("threads", spec.threads, Need::required);
  visit("buffer", spec.buffer, Need::required);
  visit("window", spec.window, Need::required);
  visit("recv_mode", spec.recv_mode, Need::required);
  visit("interval_s", spec.interval_s, Need::required);
  visit("omit_s", spec.omit_s, Need::required);
  visit("workload", spec.workload, Need::required);
  visit("engine", spec.engine, Need::unless_default);
  visit("engine_fallback", spec.engine_fallback, Need::unless_default);
  visit("direction", spec.direction, Need::unless_default);
  visit("send_mode", spec.send_mode, Need::with_direction);
  // Both travel whenever set: a server's --server-bitrate-limit weighs what the client's senders ask.
  visit("rate_bps", spec.rate_bps, Need::unless_default);
  visit("fq_rate_bps", spec.fq_rate_bps, Need::unless_default);
  visit("rate_lowat", spec.marks_follow_rate, Need::unless_default);
  visit("rx_affinity_follow", spec.rx_follow, Need::unless_default);
  visit("hash", spec.hash, Need::written);
  visit("congestion", spec.congestion, Need::written);
  visit("no_delay", spec.no_delay, Need::written);
  visit("tos", spec.tos, Need::unless_default);
  visit("repeating_payload", spec.repeating_payload, Need::unless_default);
  visit("cpus", spec.cpus, Need::written);
  visit("iface_stats", spec.iface_stats, Need::unless_default);
  visit("begins_s", spec.begins_s, Need::unless_default);
  visit("ends_s", spec.ends_s, Need::unless_default);
}

// Strings and lists a peer sends are bounded before the rules look at them.
constexpr std::size_t kMaxText = 256;
constexpr std::size_t kMaxList = 1024;
constexpr std::size_t kMaxSettings = 32;

[[noreturn]] void fail(const char* name, const std::string& what) {
  throw SpecError(std::string("field \"") + name + "\" " + what);
}

json value_json(RecvMode mode) { return to_string(mode); }
json value_json(SendMode mode) { return to_string(mode); }
json value_json(Engine engine) { return to_string(engine); }
json value_json(Direction direction) { return to_string(direction); }
json value_json(util::HashKind hash) { return util::to_string(hash); }
template <typename T>
json value_json(const T& value) {
  return value;
}

void read(const json& value, const char* name, std::uint64_t& out) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    fail(name, "must be a whole number >= 0");
  out = value.get<std::uint64_t>();
}

void read(const json& value, const char* name, std::uint32_t& out) {
  std::uint64_t wide = 0;
  read(value, name, wide);
  if (wide > UINT32_MAX) fail(name, "= " + std::to_string(wide) + " is out of range");
  out = static_cast<std::uint32_t>(wide);
}

void read(const json& value, const char* name, double& out) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) fail(name, "must be a number");
  out = value.get<double>();
}

void read(const json& value, const char* name, bool& out) {
  if (!value.is_boolean()) fail(name, "must be true or false");
  out = value.get<bool>();
}

void read(const json& value, const char* name, std::string& out) {
  if (!value.is_string()) fail(name, "must be a string");
  if (value.get_ref<const std::string&>().size() > kMaxText) fail(name, "is too long");
  out = value.get<std::string>();
}

// An enumeration by its name; `parse` returns nullopt for a name this build does not know.
template <typename Enum, typename Parse>
void read_name(const json& value, const char* name, Enum& out, Parse parse) {
  std::string text;
  read(value, name, text);
  auto parsed = parse(text);
  if (!parsed) throw SpecError(std::string(name) + " \"" + util::printable(text) + "\" is not supported");
  out = *parsed;
}

void read(const json& value, const char* name, RecvMode& out) { read_name(value, name, out, recv_mode_from_string); }
void read(const json& value, const char* name, SendMode& out) { read_name(value, name, out, send_mode_from_string); }
void read(const json& value, const char* name, Engine& out) { read_name(value, name, out, engine_from_string); }
void read(const json& value, const char* name, Direction& out) { read_name(value, name, out, direction_from_string); }
void read(const json& value, const char* name, util::HashKind& out) { read_name(value, name, out, util::hash_from_string); }

template <typename T>
void read(const json& value, const char* name, std::vector<T>& out) {
  if (!value.is_array() || value.size() > kMaxList) fail(name, "must be a list of at most " + std::to_string(kMaxList));
  out.clear();
  for (const json& entry : value) {
    T item{};
    read(entry, name, item);
    out.push_back(std::move(item));
  }
}

template <typename T>
void read(const json& value, const char* name, std::optional<T>& out) {
  read(value, name, out.emplace());
}

json setting_json(const SettingValue& value) {
  return std::visit([](const auto& held) { return json(held); }, value);
}

json settings_json(const Settings& settings) {
  json values = json::object();
  for (const Setting& setting : settings) values[setting.name] = setting_json(setting.value);
  return values;
}

// Every field's value, whatever its Need (an optional field that is off is null), and the
// workload's settings (an empty object for none).
json every_field(const TestSpec& spec) {
  json values = json::object();
  fields(spec, [&](const char* name, const auto& member, Need) {
    if constexpr (requires { member.has_value(); })
      values[name] = member ? json(*member) : json();
    else
      values[name] = value_json(member);
  });
  values["settings"] = settings_json(spec.settings);
  return values;
}

// "settings": the workload's own, each a whole number, a number, a truth value or a text, into
// `settings` (the workload's part says which it takes, and of what kind: workloads/part.hpp).
void settings_from_json(const json& object, Settings& settings) {
  if (!object.is_object() || object.size() > kMaxSettings)
    throw SpecError("field \"settings\" must be an object of at most " + std::to_string(kMaxSettings) + " settings");
  for (const auto& [name, value] : object.items()) {
    if (name.size() > kMaxText) throw SpecError("a setting's name is too long");
    if (value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
      settings.set(name, value.get<std::uint64_t>());
    } else if (value.is_number()) {
      settings.set(name, value.get<double>());
    } else if (value.is_boolean()) {
      settings.set(name, value.get<bool>());
    } else if (value.is_string() && value.get_ref<const std::string&>().size() <= kMaxText) {
      settings.set(name, value.get<std::string>());
    } else {
      throw SpecError("setting \"" + util::printable(name) + "\" must be a number, true or false, or a short text");
    }
  }
}

// A workload beside the first: what differs from a spec of its own at the defaults with the
// test's shared fields (share_test_wide()), which it takes from the test and so never says.
json with_json(const TestSpec& part, const TestSpec& test) {
  TestSpec defaults;
  share_test_wide(test, defaults);
  const json usual = every_field(defaults);
  json values = every_field(part);
  json entry = json::object();
  for (auto& [name, value] : values.items())
    if (name == "workload" || value != usual[name]) entry[name] = std::move(value);
  return entry;
}

// `with`: each entry read over a spec that holds the test's shared fields, which it may not change.
std::vector<TestSpec> with_from_json(const json& list, const TestSpec& test) {
  if (!list.is_array() || list.size() >= kMaxWorkloads)
    throw SpecError("field \"with\" must be a list of at most " + std::to_string(kMaxWorkloads - 1) + " workloads");
  std::vector<TestSpec> workloads;
  for (const json& entry : list) {
    const std::string which = "workload " + std::to_string(workloads.size() + 2) + " of \"with\"";
    if (entry.is_object() && entry.contains("with")) throw SpecError(which + " lists workloads of its own");
    TestSpec defaults;
    share_test_wide(test, defaults);
    workloads.push_back(spec_from_json(entry, Presence::any, std::move(defaults)));
    if (!shares_test_wide(test, workloads.back()))
      throw SpecError(which + " sets the window, intervals, omit, -A or --iface-stats: they are the test's");
  }
  return workloads;
}

}  // namespace

json to_json(const TestSpec& spec, Form form) {
  static const json defaults = every_field(TestSpec{});
  json values = every_field(spec);
  json message = json::object();
  if (form == Form::report) {
    values.erase("iface_stats");  // null when off: a report leaves it out, as a request does
    if (spec.iface_stats) values["iface_stats"] = *spec.iface_stats;
    message = std::move(values);
  } else {
    fields(spec, [&](const char* name, const auto&, Need need) {
      if (need == Need::unless_default && values[name] == defaults[name]) return;
      if (need == Need::with_direction && spec.direction == Direction::forward) return;
      message[name] = std::move(values[name]);
    });
  }
  if (spec.settings.empty()) message.erase("settings");
  else message["settings"] = settings_json(spec.settings);
  // Only a composed test says "with": a spec of one workload reads as it always has.
  for (const TestSpec& part : spec.with) message["with"].push_back(with_json(part, spec));
  return message;
}

TestSpec spec_from_json(const json& message, Presence presence, TestSpec defaults) {
  if (!message.is_object()) throw SpecError("a test spec must be a JSON object");
  TestSpec spec = std::move(defaults);
  fields(spec, [&](const char* name, auto& member, Need need) {
    auto found = message.find(name);
    if (found == message.end()) {
      if (need == Need::required && presence == Presence::as_on_the_wire) fail(name, "is missing");
      return;
    }
    read(*found, name, member);
  });
  if (auto settings = message.find("settings"); settings != message.end()) settings_from_json(*settings, spec.settings);
  if (auto with = message.find("with"); with != message.end()) spec.with = with_from_json(*with, spec);
  return spec;
}

}  // namespace testio::spec
