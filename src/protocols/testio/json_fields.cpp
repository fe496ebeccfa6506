#include "protocols/testio/json_fields.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace testio::control::fields {

void expect_type(const json& message, const char* type) {
  auto it = message.find("type");
  if (it == message.end() || !it->is_string())
    throw ProtocolError("control message has no \"type\" string");
  const std::string& actual = it->get_ref<const std::string&>();
  if (actual == "error") {
    auto text = message.find("message");
    auto code = message.find("code");
    throw PeerError(text != message.end() && text->is_string() ? text->get<std::string>()
                                                                : "unspecified error",
                    code != message.end() && code->is_string() ? code->get<std::string>() : "");
  }
  if (actual != type)
    throw ProtocolError("expected a \"" + std::string(type) + "\" message, got \"" + actual + "\"");
}

const json& field(const json& message, const char* name) {
  auto it = message.find(name);
  if (it == message.end()) throw ProtocolError(std::string("field \"") + name + "\" is missing");
  return *it;
}

std::uint64_t get_uint(const json& message, const char* name, std::uint64_t min, std::uint64_t max) {
  const json& value = field(message, name);
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    throw ProtocolError(std::string("field \"") + name + "\" must be a whole number >= 0");
  auto number = value.get<std::uint64_t>();
  if (number < min || number > max)
    throw ProtocolError(std::string("field \"") + name + "\" = " + std::to_string(number) +
                        " is outside " + std::to_string(min) + ".." + std::to_string(max));
  return number;
}

double get_double(const json& message, const char* name, double min, double max) {
  const json& value = field(message, name);
  if (!value.is_number()) throw ProtocolError(std::string("field \"") + name + "\" must be a number");
  auto number = value.get<double>();
  if (!std::isfinite(number) || number < min || number > max)
    throw ProtocolError(std::string("field \"") + name + "\" = " + value.dump() + " is outside " +
                        std::to_string(min) + ".." + std::to_string(max));
  return number;
}

std::uint64_t get_optional_uint(const json& message, const char* name) {
  return message.contains(name) ? get_uint(message, name, 0, UINT64_MAX) : 0;
}

std::string get_string(const json& message, const char* name, std::size_t max_length) {
  const json& value = field(message, name);
  if (!value.is_string()) throw ProtocolError(std::string("field \"") + name + "\" must be a string");
  auto text = value.get<std::string>();
  if (text.size() > max_length) throw ProtocolError(std::string("field \"") + name + "\" is too long");
  return text;
}

std::vector<std::uint32_t> get_cpus(const json& message, const char* name) {
  std::vector<std::uint32_t> cpus;
  auto it = message.find(name);
  if (it == message.end()) return cpus;
  if (!it->is_array() || it->size() > 1024)
    throw ProtocolError(std::string("field \"") + name + "\" must be a list of at most 1024 CPUs");
  for (const json& cpu : *it) {
    if (!cpu.is_number_unsigned() || cpu.get<std::uint64_t>() >= 1024)
      throw ProtocolError(std::string("field \"") + name + "\" holds CPU numbers 0..1023");
    cpus.push_back(cpu.get<std::uint32_t>());
  }
  return cpus;
}

bool is_count(const json& value) noexcept {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

}  // namespace testio::control::fields
