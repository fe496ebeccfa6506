// Message digests of a byte stream, from OpenSSL's libcrypto (EVP): SHA-1 by default, as the
// published experiment used, SHA-256 on request, or none.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace testio::util {

enum class HashKind { none, sha1, sha256 };
std::optional<HashKind> hash_from_string(std::string_view text) noexcept;
std::string_view to_string(HashKind kind) noexcept;

// Lower-case hex of `size` bytes.
std::string to_hex(const unsigned char* bytes, std::size_t size);

// Owner: one thread at a time (a stream's worker); update() is the hot path and never allocates.
class Digest {
 public:
  explicit Digest(HashKind kind);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;

  void update(const void* data, std::size_t size) noexcept;
  // Lower-case hex of the digest; empty for HashKind::none. Call once.
  std::string finish();
  HashKind kind() const noexcept { return kind_; }

 private:
  HashKind kind_;
  evp_md_ctx_st* context_ = nullptr;
};

}  // namespace testio::util
