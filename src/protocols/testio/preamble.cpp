#include <cstring>

#include "protocols/testio/protocol.hpp"

namespace testio::control {
namespace {

void put_be(unsigned char* out, std::uint64_t value, int bytes) noexcept {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<unsigned char>(value & 0xff);
    value >>= 8;
  }
}

std::uint64_t get_be(const unsigned char* in, int bytes) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

}  // namespace

PreambleBytes encode_preamble(const Preamble& preamble) noexcept {
  PreambleBytes bytes{};
  std::memcpy(bytes.data(), kMagic.data(), kMagic.size());
  bytes[4] = static_cast<unsigned char>(preamble.kind);
  bytes[5] = preamble.version;
  put_be(&bytes[8], preamble.test_id, 8);
  put_be(&bytes[16], preamble.stream, 4);
  return bytes;
}

bool starts_with_magic(const unsigned char* bytes, std::size_t size) noexcept {
  return size >= kMagic.size() && std::memcmp(bytes, kMagic.data(), kMagic.size()) == 0;
}

DecodedPreamble decode_preamble(const PreambleBytes& bytes) noexcept {
  DecodedPreamble decoded;
  if (!starts_with_magic(bytes.data(), bytes.size())) {
    decoded.status = DecodedPreamble::Status::not_testio;
    return decoded;
  }
  decoded.preamble.version = bytes[5];
  if (bytes[5] != kProtocolVersion) {
    decoded.status = DecodedPreamble::Status::bad_version;
    return decoded;
  }
  if (bytes[4] != static_cast<unsigned char>(ConnectionKind::control) &&
      bytes[4] != static_cast<unsigned char>(ConnectionKind::data)) {
    decoded.status = DecodedPreamble::Status::bad_kind;
    return decoded;
  }
  decoded.preamble.kind = static_cast<ConnectionKind>(bytes[4]);
  decoded.preamble.test_id = get_be(&bytes[8], 8);
  decoded.preamble.stream = static_cast<std::uint32_t>(get_be(&bytes[16], 4));
  return decoded;
}

}  // namespace testio::control
