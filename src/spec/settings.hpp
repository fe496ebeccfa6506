// A workload's own settings in a spec (rr's --msize, -u's --batch, ...), by name. The spec carries
// them, on the wire and in reports, without knowing whose they are; the workload reads and writes
// them as its own typed part (workloads/part.hpp) and says which it takes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace testio::spec {

// A setting's value as JSON carries it: a whole number, a truth value, a number, or a text.
using SettingValue = std::variant<std::uint64_t, bool, double, std::string>;

struct Setting {
  std::string name;
  SettingValue value;
  bool operator==(const Setting&) const = default;
};

// Kept sorted by name, so two specs that say the same compare equal whatever order said it.
// Owner: whoever owns the spec.
class Settings {
 public:
  const SettingValue* find(std::string_view name) const noexcept {
    auto it = std::lower_bound(all_.begin(), all_.end(), name, before);
    return it != all_.end() && it->name == name ? &it->value : nullptr;
  }
  void set(std::string_view name, SettingValue value) {
    auto it = std::lower_bound(all_.begin(), all_.end(), name, before);
    if (it != all_.end() && it->name == name) it->value = std::move(value);
    else all_.insert(it, Setting{std::string(name), std::move(value)});
  }
  template <typename Keep>
  void keep_only(Keep keep) {
    std::erase_if(all_, [&](const Setting& setting) { return !keep(setting.name); });
  }
  std::size_t size() const noexcept { return all_.size(); }
  bool empty() const noexcept { return all_.empty(); }
  auto begin() const noexcept { return all_.begin(); }
  auto end() const noexcept { return all_.end(); }
  bool operator==(const Settings&) const = default;

 private:
  static bool before(const Setting& setting, std::string_view name) noexcept { return setting.name < name; }
  std::vector<Setting> all_;
};

}  // namespace testio::spec
