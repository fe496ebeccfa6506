// --spread even: source ports that divide a test's flows evenly over the interfaces the route to
// the peer spreads them over, where the path is predictable: the nexthops of a multipath route
// (each candidate port asked of the kernel, as flow_path does), or the members of a bond hashing
// layer3+4 (its hash computed here). Candidates come from the kernel's ephemeral range, from a
// random start. Owner: the client's control thread; not for hot paths.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <sys/socket.h>

#include "net/nic_counters.hpp"
#include "net/route_lookup.hpp"

namespace testio::net {

class PortSpreader {
 public:
  // For flows from `local`'s address (its port ignored) to `remote`.
  PortSpreader(const sockaddr* local, const sockaddr* remote, const std::string& sys_root = kSysRoot);

  // Empty when the path cannot be predicted or has one interface; why_not() then says why.
  const std::vector<std::string>& devices() const noexcept { return devices_; }
  const std::string& why_not() const noexcept { return why_not_; }

  // A port not handed out before whose flow leaves by devices()[turn % devices().size()]; 0
  // when the ephemeral range has none left. The caller binds it (and asks again if it is busy).
  std::uint16_t port_for(std::uint32_t turn);
  // The flows per interface after `turns` ports were handed out: the split asked.
  std::vector<std::pair<std::string, std::uint32_t>> split(std::uint32_t turns) const;

 private:
  // The index in devices_ of a flow from `port`, or devices_.size() when it leaves elsewhere.
  std::size_t device_of(std::uint16_t port) const;

  FlowEnds ends_;
  std::string sys_root_;
  bool bond_ = false;  // devices_ are a bond's usable members, picked by layer34_member
  std::vector<std::string> devices_;
  std::string why_not_;
  std::uint16_t low_ = 32768, high_ = 60999;  // ip_local_port_range
  std::uint32_t scanned_ = 0;                 // candidates tried so far
  std::uint16_t start_ = 0;                   // the random first candidate's offset
  std::vector<std::vector<std::uint16_t>> spare_;  // per device, ports found and not yet handed out
};

}  // namespace testio::net
