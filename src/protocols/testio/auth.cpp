#include "protocols/testio/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "util/digest.hpp"
#include "util/mapped_file.hpp"

namespace testio::control {

std::string load_psk(const std::string& path, bool& readable_by_others) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0)
    throw std::runtime_error("cannot read key file " + path + ": " + std::strerror(errno));
  readable_by_others = (status.st_mode & (S_IRGRP | S_IROTH)) != 0;
  std::optional<std::string> content = util::read_whole_file(path);
  if (!content) throw std::runtime_error("cannot read key file " + path + ": " + std::strerror(errno));
  std::string key = std::move(*content);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) throw std::runtime_error("key file " + path + " is empty");
  return key;
}

std::string make_nonce() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw std::runtime_error("the system's random generator failed");
  return util::to_hex(bytes.data(), bytes.size());
}

std::string auth_response(const std::string& key, const std::string& nonce) {
  std::string message = "testio-auth-v1:" + nonce;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  return util::to_hex(digest, length);
}

bool auth_matches(const std::string& expected, const std::string& given) noexcept {
  // The length of a hex SHA-256 is public; only the contents need a constant-time compare.
  return expected.size() == given.size() && CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

}  // namespace testio::control
