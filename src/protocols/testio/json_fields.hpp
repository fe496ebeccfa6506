// What the control messages' parsers share: reading a typed field from a peer's JSON object,
// each failure one ProtocolError naming the field. Internal to testio's codec (codec.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocols/testio/protocol.hpp"

namespace testio::control::fields {

using nlohmann::json;

// Raises PeerError for an error frame, ProtocolError for any other unexpected type.
void expect_type(const json& message, const char* type);
const json& field(const json& message, const char* name);
std::uint64_t get_uint(const json& message, const char* name, std::uint64_t min, std::uint64_t max);
double get_double(const json& message, const char* name, double min, double max);
// A whole number that older peers leave out: absent is 0.
std::uint64_t get_optional_uint(const json& message, const char* name);
std::string get_string(const json& message, const char* name, std::size_t max_length);
// CPU numbers below 1024, at most 1024 of them (an optional field: absent is empty).
std::vector<std::uint32_t> get_cpus(const json& message, const char* name);
bool is_count(const json& value) noexcept;

}  // namespace testio::control::fields
