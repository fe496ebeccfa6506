// The handshake's frames and the small ones (start, stop, error): build and parse.
#include "protocols/testio/json_fields.hpp"

#include <nlohmann/json.hpp>
#include "protocols/testio/protocol.hpp"

namespace testio::control {

using namespace fields;

json to_json(const ServerHello& hello) {
  return {{"type", "hello"}, {"server_version", hello.server_version}, {"auth", hello.auth}, {"nonce", hello.nonce}};
}

ServerHello parse_server_hello(const json& message) {
  expect_type(message, "hello");
  ServerHello hello;
  hello.server_version = get_string(message, "server_version", 64);
  hello.auth = get_string(message, "auth", 32);
  if (hello.auth != "none" && hello.auth != "hmac-sha256")
    throw ProtocolError("the server asks for authentication \"" + hello.auth + "\", which this client does not know");
  hello.nonce = get_string(message, "nonce", 128);
  if (hello.auth != "none" && hello.nonce.size() < 32) throw ProtocolError("the server's challenge is too short");
  return hello;
}

json to_json(const TestRequest& request) {
  // The spec's own mapping, plus what belongs to the handshake rather than the test.
  json message = spec::to_json(request.spec);
  message["type"] = "test_request";
  message["client_threads"] = request.client_threads;
  message["client_version"] = request.client_version;
  message["auth"] = request.auth;
  message["max_wait_s"] = request.max_wait_s;
  return message;
}

TestRequest parse_test_request(const json& message) {
  expect_type(message, "test_request");
  TestRequest request;
  try {
    request.spec = spec::spec_from_json(message);
  } catch (const spec::SpecError& error) {
    throw ProtocolError(error.what());
  }
  request.client_threads = static_cast<std::uint32_t>(get_uint(message, "client_threads", 1, 1u << 20));
  request.client_version = get_string(message, "client_version", 64);
  request.auth = get_string(message, "auth", 128);
  if (message.contains("max_wait_s")) request.max_wait_s = get_double(message, "max_wait_s", 0, 86400);
  return request;
}

json to_json(const TestAccepted& accepted) {
  return {{"type", "test_accepted"},
          {"test_id", accepted.test_id},
          {"server_threads", accepted.server_threads},
          {"server_cpus", accepted.server_cpus},
          {"server_version", accepted.server_version},
          {"server_received_ns", accepted.server_received_ns},
          {"server_clock_ns", accepted.server_clock_ns}};
}

TestAccepted parse_test_accepted(const json& message, const spec::Limits& limits) {
  expect_type(message, "test_accepted");
  TestAccepted accepted;
  accepted.test_id = get_uint(message, "test_id", 1, UINT64_MAX);
  accepted.server_threads =
      static_cast<std::uint32_t>(get_uint(message, "server_threads", 1, limits.max_threads));
  accepted.server_version = get_string(message, "server_version", 64);
  accepted.server_cpus = get_cpus(message, "server_cpus");
  accepted.server_received_ns = get_optional_uint(message, "server_received_ns");
  accepted.server_clock_ns = get_optional_uint(message, "server_clock_ns");
  return accepted;
}

json start_message() { return {{"type", "start"}}; }

json stop_message() { return {{"type", "stop"}}; }

namespace {
bool has_type(const json& message, const char* name) noexcept {
  auto type = message.find("type");
  return type != message.end() && type->is_string() && type->get_ref<const std::string&>() == name;
}
}  // namespace

bool is_stop(const json& message) noexcept { return has_type(message, "stop"); }

json queued_message(std::uint32_t ahead) { return {{"type", "queued"}, {"ahead", ahead}}; }

std::optional<std::uint32_t> queued_ahead(const json& message) {
  if (!has_type(message, "queued")) return std::nullopt;
  return static_cast<std::uint32_t>(get_uint(message, "ahead", 0, 1u << 20));
}

json alive_message() { return {{"type", "alive"}}; }

bool is_alive(const json& message) noexcept { return has_type(message, "alive"); }

json error_message(const std::string& message, const std::string& code) {
  return {{"type", "error"}, {"code", code}, {"message", message}};
}

void parse_start(const json& message) { expect_type(message, "start"); }

void fail_unexpected(const json& message, const std::string& during) {
  auto type = message.find("type");
  if (type != message.end() && type->is_string() && *type == "error")
    expect_type(message, "error");  // raises PeerError with the peer's sentence
  throw ProtocolError("unexpected control message " + during);
}

}  // namespace testio::control
