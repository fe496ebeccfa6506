#include "net/access_list.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <asio/ip/address.hpp>

namespace testio::net {
namespace {

asio::ip::address unmapped(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  return address;
}

// An address's bytes as a Network holds them: IPv4's 4 first, the rest zero.
std::array<unsigned char, 16> bytes_of(const asio::ip::address& address) {
  std::array<unsigned char, 16> bytes{};
  if (address.is_v4()) {
    const auto v4 = address.to_v4().to_bytes();
    std::copy(v4.begin(), v4.end(), bytes.begin());
  } else {
    bytes = address.to_v6().to_bytes();
  }
  return bytes;
}

bool prefix_matches(const std::array<unsigned char, 16>& a, const std::array<unsigned char, 16>& b,
                    unsigned prefix) noexcept {
  for (std::size_t i = 0; i < a.size() && prefix > 0; ++i) {
    unsigned bits = prefix >= 8 ? 8 : prefix;
    unsigned char mask = static_cast<unsigned char>(0xff << (8 - bits));
    if ((a[i] & mask) != (b[i] & mask)) return false;
    prefix -= bits;
  }
  return true;
}

}  // namespace

AccessList AccessList::parse(const std::string& text) {
  AccessList list;
  if (text.empty()) return list;  // no --allow: everyone
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (entry.empty()) throw std::invalid_argument("--allow has an empty entry");
    std::size_t slash = entry.find('/');
    asio::error_code ec;
    asio::ip::address base = asio::ip::make_address(entry.substr(0, slash), ec);
    if (ec) throw std::invalid_argument("--allow entry '" + entry + "' is not an address or CIDR network");
    base = unmapped(base);
    unsigned max_prefix = base.is_v4() ? 32 : 128;
    unsigned prefix = max_prefix;
    if (slash != std::string::npos) {
      std::string bits = entry.substr(slash + 1);
      auto [ptr, error] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
      if (bits.empty() || error != std::errc() || ptr != bits.data() + bits.size() || prefix > max_prefix)
        throw std::invalid_argument("--allow entry '" + entry + "' has a bad prefix length");
    }
    list.networks_.push_back({bytes_of(base), base.is_v4(), prefix});
    if (end == text.size()) break;
  }
  return list;
}

bool AccessList::allows(const asio::ip::address& peer) const noexcept {
  if (networks_.empty()) return true;
  const asio::ip::address address = unmapped(peer);
  const std::array<unsigned char, 16> bytes = bytes_of(address);
  return std::any_of(networks_.begin(), networks_.end(), [&](const Network& network) {
    return network.v4 == address.is_v4() && prefix_matches(network.base, bytes, network.prefix);
  });
}

}  // namespace testio::net
