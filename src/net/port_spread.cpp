#include "net/port_spread.hpp"

#include <cstring>
#include <fstream>

#include <netinet/in.h>

#include "net/flow_path.hpp"

namespace testio::net {
namespace {

void set_port(sockaddr* address, std::uint16_t port) {
  if (address->sa_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(port);
  else
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(port);
}

}  // namespace

PortSpreader::PortSpreader(const sockaddr* local, const sockaddr* remote, const std::string& sys_root)
    : ends_(local, remote), sys_root_(sys_root) {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 0, high = 0;
  if (range >> low >> high && low >= 1 && low < high && high <= 65535) {
    low_ = static_cast<std::uint16_t>(low);
    high_ = static_cast<std::uint16_t>(high);
  }
  start_ = static_cast<std::uint16_t>(std::random_device{}() % (high_ - low_ + 1u));
  const RouteReply route = route_nexthops(ends_.local(), ends_.remote());
  if (!route.error.empty()) {
    why_not_ = route.error;
    return;
  }
  if (route.nexthops.size() > 1) {
    for (const Nexthop& nexthop : route.nexthops) devices_.push_back(nexthop.device);
  } else if (const std::string bond = bond_below(route.nexthops.front().device, sys_root); !bond.empty()) {
    // A bond's members are spread only when its hash is one testio computes (flow_path says).
    const FlowPath probe = flow_path(ends_.local(), ends_.remote(), sys_root);
    if (probe.device != kUnknownDevice) {
      bond_ = true;
      devices_ = usable_bond_members(bond, sys_root);
    } else {
      why_not_ = "where " + bond + " sends a flow is not predictable (" + probe.how + ")";
    }
  } else {
    why_not_ = "the route to the server leaves by " + route.nexthops.front().device + " alone";
  }
  if (devices_.size() < 2) {
    if (why_not_.empty()) why_not_ = "only one of the bond's members is up";
    devices_.clear();
  }
  spare_.resize(devices_.size());
}

std::size_t PortSpreader::device_of(std::uint16_t port) const {
  sockaddr_storage local{};
  std::memcpy(&local, ends_.local(), sizeof(local));
  set_port(reinterpret_cast<sockaddr*>(&local), port);
  if (bond_) {
    FlowPath path = flow_path(reinterpret_cast<const sockaddr*>(&local), ends_.remote(), sys_root_);
    for (std::size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i] == path.device) return i;
    return devices_.size();
  }
  const RouteReply route = route_of_flow(reinterpret_cast<const sockaddr*>(&local), ends_.remote(), IPPROTO_TCP);
  if (!route.error.empty()) return devices_.size();
  for (std::size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i] == route.nexthops.front().device) return i;
  return devices_.size();
}

std::uint16_t PortSpreader::port_for(std::uint32_t turn) {
  if (devices_.empty()) return 0;
  const std::size_t wanted = turn % devices_.size();
  const std::uint32_t span = high_ - low_ + 1u;
  while (spare_[wanted].empty() && scanned_ < span) {
    const auto port = static_cast<std::uint16_t>(low_ + (start_ + scanned_++) % span);
    if (std::size_t device = device_of(port); device < devices_.size()) spare_[device].push_back(port);
  }
  if (spare_[wanted].empty()) return 0;
  const std::uint16_t port = spare_[wanted].front();
  spare_[wanted].erase(spare_[wanted].begin());
  return port;
}

std::vector<std::pair<std::string, std::uint32_t>> PortSpreader::split(std::uint32_t turns) const {
  std::vector<std::pair<std::string, std::uint32_t>> flows;
  const auto count = static_cast<std::uint32_t>(devices_.size());
  for (std::uint32_t k = 0; k < count; ++k) flows.emplace_back(devices_[k], turns / count + (k < turns % count ? 1 : 0));
  return flows;
}

}  // namespace testio::net
