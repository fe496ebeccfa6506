#include "util/digest.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace testio::util {

std::optional<HashKind> hash_from_string(std::string_view text) noexcept {
  for (HashKind kind : {HashKind::none, HashKind::sha1, HashKind::sha256})
    if (to_string(kind) == text) return kind;
  return std::nullopt;
}

std::string_view to_string(HashKind kind) noexcept {
  switch (kind) {
    case HashKind::none: return "none";
    case HashKind::sha1: return "sha1";
    case HashKind::sha256: return "sha256";
  }
  return "none";
}

Digest::Digest(HashKind kind) : kind_(kind) {
  if (kind_ == HashKind::none) return;
  context_ = EVP_MD_CTX_new();
  const EVP_MD* algorithm = kind_ == HashKind::sha1 ? EVP_sha1() : EVP_sha256();
  if (!context_ || EVP_DigestInit_ex(context_, algorithm, nullptr) != 1) {
    EVP_MD_CTX_free(context_);
    throw std::runtime_error("cannot start a " + std::string(to_string(kind_)) + " digest");
  }
}

Digest::~Digest() { EVP_MD_CTX_free(context_); }

Digest::Digest(Digest&& other) noexcept : kind_(other.kind_), context_(other.context_) { other.context_ = nullptr; }

Digest& Digest::operator=(Digest&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(context_);
    kind_ = other.kind_;
    context_ = other.context_;
    other.context_ = nullptr;
  }
  return *this;
}

void Digest::update(const void* data, std::size_t size) noexcept {
  if (context_) EVP_DigestUpdate(context_, data, size);
}

std::string Digest::finish() {
  if (!context_) return {};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_, digest, &length);
  EVP_MD_CTX_free(context_);
  context_ = nullptr;
  return to_hex(digest, length);
}

std::string to_hex(const unsigned char* bytes, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    text.push_back(digits[bytes[i] >> 4]);
    text.push_back(digits[bytes[i] & 0xf]);
  }
  return text;
}

}  // namespace testio::util
