// Pre-shared-key authentication of the control connection: the server sends a fresh random
// nonce; the client answers HMAC-SHA256(key, "testio-auth-v1:" + nonce); the server compares in
// constant time. The key never crosses the wire and never reaches a log or a report.
#pragma once

#include <string>

namespace testio::control {

// Reads the key from `path` (trailing newlines and spaces dropped). Throws std::runtime_error
// with one sentence for an unreadable or empty file; sets `readable_by_others` when the file's
// mode lets group or others read it, so the caller can warn.
std::string load_psk(const std::string& path, bool& readable_by_others);

// 32 random bytes from OpenSSL's RAND_bytes, hex-encoded.
std::string make_nonce();

// Hex HMAC-SHA256 of the nonce under the key.
std::string auth_response(const std::string& key, const std::string& nonce);

// Constant-time comparison of a client's answer with the expected one.
bool auth_matches(const std::string& expected, const std::string& given) noexcept;

}  // namespace testio::control
