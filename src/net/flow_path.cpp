#include "net/flow_path.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "net/route_lookup.hpp"

namespace testio::net {
namespace {

constexpr int kMaxDepth = 4;  // VLAN on bond on ...: deeper stacks are not followed

std::string device_dir(const std::string& sys_root, const std::string& name) {
  return sys_root + "/class/net/" + name;
}

// The first word of a sysfs file ("balance-xor" of "balance-xor 2"); empty when unreadable.
std::string first_word(const std::string& path) {
  std::ifstream file(path);
  std::string word;
  file >> word;
  return word;
}

// The lower devices of a stacked device (a VLAN's or macvlan's "lower_NAME" links).
std::vector<std::string> lower_devices(const std::string& name, const std::string& sys_root) {
  std::vector<std::string> lower;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(device_dir(sys_root, name), error)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("lower_", 0) == 0 && is_valid_nic_name(file.substr(6))) lower.push_back(file.substr(6));
  }
  std::sort(lower.begin(), lower.end());
  return lower;
}

// A bond's members that can send now, in the bond's order: up, and in 802.3ad in the active
// aggregator; the kernel hashes over these.
std::vector<std::string> usable_members(const std::string& bond, const std::string& mode, const std::string& sys_root) {
  const std::string aggregator = first_word(device_dir(sys_root, bond) + "/bonding/ad_aggregator");
  std::vector<std::string> usable;
  for (const std::string& member : bond_members(bond, sys_root)) {
    if (first_word(device_dir(sys_root, member) + "/operstate") != "up") continue;
    const std::string joined = first_word(device_dir(sys_root, member) + "/bonding_slave/ad_aggregator_id");
    if (mode == "802.3ad" && !aggregator.empty() && !joined.empty() && joined != aggregator) continue;
    usable.push_back(member);
  }
  return usable;
}

// Below bond `bond`: the member this flow leaves by, or kUnknownDevice with why.
FlowPath bond_member(const std::string& bond, const sockaddr* local, const sockaddr* remote, const std::string& sys_root) {
  const std::string dir = device_dir(sys_root, bond) + "/bonding/";
  const std::string mode = first_word(dir + "mode");
  if (mode == "active-backup") {
    const std::string active = first_word(dir + "active_slave");
    if (is_valid_nic_name(active)) return {active, bond + " active-backup"};
    return {kUnknownDevice, bond + " active-backup: no active member"};
  }
  const std::string policy = first_word(dir + "xmit_hash_policy");
  if ((mode == "balance-xor" || mode == "802.3ad") && policy == "layer3+4") {
    const std::vector<std::string> usable = usable_members(bond, mode, sys_root);
    if (usable.empty()) return {kUnknownDevice, bond + ": no member is up"};
    return {usable[layer34_member(local, remote, static_cast<std::uint32_t>(usable.size()))], bond + " layer3+4 hash"};
  }
  // layer2 and layer2+3 hash MAC addresses, encap3+4 the socket's own hash, balance-rr and the
  // adaptive modes choose per packet or by load: nothing a program can predict.
  return {kUnknownDevice, bond + " " + (mode.empty() ? "bond" : mode) + (policy.empty() ? "" : " " + policy)};
}

std::uint32_t folded_address(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    std::uint32_t word = 0;
    std::memcpy(&word, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, sizeof(word));
    return word;
  }
  std::array<std::uint32_t, 4> words{};
  std::memcpy(words.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, sizeof(words));
  return words[0] ^ words[1] ^ words[2] ^ words[3];
}

std::uint16_t port_bytes(const sockaddr* address) {
  return address->sa_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(address)->sin_port
                                       : reinterpret_cast<const sockaddr_in6*>(address)->sin6_port;
}

std::string address_text(const sockaddr* address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  const void* bytes = address->sa_family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(address)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  return ::inet_ntop(address->sa_family, bytes, text.data(), text.size()) ? text.data() : "the peer";
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string clipped(std::string how) {
  if (how.size() > kMaxPathHow) how.resize(kMaxPathHow);
  return how;
}

}  // namespace

std::uint32_t layer34_member(const sockaddr* local, const sockaddr* remote, std::uint32_t members) {
  if (members == 0) return 0;
  // The kernel reads the source and destination ports, as they sit in the header, as one word.
  std::array<std::uint16_t, 2> ports{port_bytes(local), port_bytes(remote)};
  std::uint32_t hash = 0;
  std::memcpy(&hash, ports.data(), sizeof(hash));
  hash ^= folded_address(remote) ^ folded_address(local);
  hash ^= hash >> 16;
  hash ^= hash >> 8;
  hash >>= 1;  // the lowest bit dropped: connect() prefers even source ports
  return hash % members;
}

FlowPath flow_path(const sockaddr* given_local, const sockaddr* given_remote, const std::string& sys_root) {
  const FlowEnds ends(given_local, given_remote);
  const sockaddr* local = ends.local();
  const sockaddr* remote = ends.remote();
  const RouteReply route = route_of_flow(local, remote, IPPROTO_TCP);
  if (!route.error.empty()) return {kUnknownDevice, clipped(route.error)};
  FlowPath path{route.nexthops.front().device, "route"};
  if (!is_valid_nic_name(path.device)) return {kUnknownDevice, "the route's interface has no name"};
  const RouteReply entry = route_nexthops(local, remote);
  if (entry.nexthops.size() > 1) path.how = "multipath route";
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (!bond_members(path.device, sys_root).empty()) {
      FlowPath member = bond_member(path.device, local, remote, sys_root);
      return {member.device, clipped(path.how + ", " + member.how)};
    }
    const std::vector<std::string> lower = lower_devices(path.device, sys_root);
    if (lower.size() != 1) break;
    path.how += ", on " + lower.front();
    path.device = lower.front();
  }
  path.how = clipped(path.how);
  return path;
}

std::string bond_below(const std::string& device, const std::string& sys_root) {
  std::string at = device;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (!bond_members(at, sys_root).empty()) return at;
    const std::vector<std::string> lower = lower_devices(at, sys_root);
    if (lower.size() != 1) break;
    at = lower.front();
  }
  return {};
}

std::vector<std::string> usable_bond_members(const std::string& bond, const std::string& sys_root) {
  return usable_members(bond, first_word(device_dir(sys_root, bond) + "/bonding/mode"), sys_root);
}

std::vector<std::string> carrying_devices(const std::string& device, const std::string& sys_root) {
  std::string at = device;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    std::vector<std::string> members = bond_members(at, sys_root);
    if (!members.empty()) return members;
    const std::vector<std::string> lower = lower_devices(at, sys_root);
    if (lower.size() != 1) break;
    at = lower.front();
  }
  return {at};
}

void ChosenNics::add(const std::string& name, const std::string& sys_root) {
  if (names.size() < kMaxNics && std::find(names.begin(), names.end(), name) == names.end() && nic_exists(name, sys_root))
    names.push_back(name);
}

ChosenNics choose_nics(const std::vector<std::string>& asked, const sockaddr* local, const sockaddr* remote,
                       const std::string& sys_root) {
  ChosenNics chosen;
  for (const std::string& name : asked)
    if (nic_exists(name, sys_root))
      for (const std::string& below : carrying_devices(name, sys_root)) chosen.add(below, sys_root);
  if (!chosen.names.empty()) {
    chosen.reason = "as asked (" + joined(asked) + ")";
    if (chosen.reason.size() > kMaxNicsReason) chosen.reason.resize(kMaxNicsReason);
    return chosen;
  }
  if (!local || !remote) return chosen;
  chosen = nics_toward(local, remote, sys_root);
  if (!asked.empty()) chosen.reason += "; none of " + joined(asked) + " is here";
  if (chosen.reason.size() > kMaxNicsReason) chosen.reason.resize(kMaxNicsReason);
  return chosen;
}

ChosenNics nics_toward(const sockaddr* given_local, const sockaddr* given_remote, const std::string& sys_root) {
  const FlowEnds ends(given_local, given_remote);
  const sockaddr* local = ends.local();
  const sockaddr* remote = ends.remote();
  ChosenNics chosen;
  auto add = [&](const std::string& name) { chosen.add(name, sys_root); };
  const RouteReply route = route_nexthops(local, remote);
  if (!route.error.empty() || route.nexthops.empty()) {
    const std::string holder = nic_holding(local);
    for (const std::string& name : carrying_devices(holder, sys_root)) add(name);
    chosen.reason = "the interface holding " + address_text(local) + " (" + route.error + ")";
    return chosen;
  }
  std::vector<std::string> described;
  for (const Nexthop& nexthop : route.nexthops) {
    const std::vector<std::string> below = carrying_devices(nexthop.device, sys_root);
    for (const std::string& name : below) add(name);
    described.push_back(below == std::vector<std::string>{nexthop.device} ? nexthop.device
                                                                          : nexthop.device + " (" + joined(below) + ")");
  }
  chosen.reason = "the route to " + address_text(remote) +
                  (route.nexthops.size() > 1 ? " has " + std::to_string(route.nexthops.size()) + " nexthops: "
                                             : " leaves by ") +
                  joined(described);
  return chosen;
}

}  // namespace testio::net
