// --allow CIDR[,CIDR...]: which peers the server talks to at all.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"  // asio::ip::address by name: the command line parses --allow without Asio

namespace testio::net {

class AccessList {
 public:
  // Parses "198.18.0.0/15,::1,fd00::/8"; an address without a prefix is a single host. Throws
  // std::invalid_argument with one sentence naming the bad entry.
  static AccessList parse(const std::string& text);

  bool empty() const noexcept { return networks_.empty(); }
  // True when the list is empty or `address` falls in one of its networks. IPv4-mapped IPv6
  // addresses (a dual-stack listener's view of IPv4 peers) are checked as IPv4.
  bool allows(const asio::ip::address& address) const noexcept;

 private:
  struct Network {
    std::array<unsigned char, 16> base;  // an IPv4 network's 4 bytes first
    bool v4;
    unsigned prefix;
  };
  std::vector<Network> networks_;
};

}  // namespace testio::net
