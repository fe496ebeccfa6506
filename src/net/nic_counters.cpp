#include "net/nic_counters.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/stat.h>

namespace testio::net {
namespace {

std::string nic_dir(const std::string& sys_root, const std::string& name) {
  return sys_root + "/class/net/" + name;
}

std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text)) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Four of NAME's statistics files, in order; nullopt when any cannot be read.
std::optional<std::array<std::uint64_t, 4>> read_statistics(const std::string& sys_root, const std::string& name,
                                                            const std::array<const char*, 4>& files) {
  if (!is_valid_nic_name(name)) return std::nullopt;
  const std::string dir = nic_dir(sys_root, name) + "/statistics/";
  std::array<std::uint64_t, 4> values{};
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::optional<std::uint64_t> value = read_number(dir + files[i]);
    if (!value) return std::nullopt;
    values[i] = *value;
  }
  return values;
}

bool same_address(const sockaddr* a, const sockaddr* b) noexcept {
  if (a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

}  // namespace

bool is_valid_nic_name(const std::string& name) noexcept {
  if (name.empty() || name.size() > kMaxNicName || name == "." || name == "..") return false;
  for (char c : name)
    if (c == '/' || c == ':' || c <= ' ' || c > '~') return false;
  return true;
}

bool nic_exists(const std::string& name, const std::string& sys_root) {
  struct stat info {};
  return is_valid_nic_name(name) && ::stat((nic_dir(sys_root, name) + "/statistics").c_str(), &info) == 0;
}

std::optional<NicCounters> read_nic_counters(const std::string& name, const std::string& sys_root) {
  auto values = read_statistics(sys_root, name, {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets"});
  if (!values) return std::nullopt;
  return NicCounters{(*values)[0], (*values)[1], (*values)[2], (*values)[3]};
}

std::optional<NicDrops> read_nic_drops(const std::string& name, const std::string& sys_root) {
  auto values = read_statistics(sys_root, name, {"rx_dropped", "rx_missed_errors", "rx_fifo_errors", "tx_dropped"});
  if (!values) return std::nullopt;
  return NicDrops{(*values)[0], (*values)[1], (*values)[2], (*values)[3]};
}

std::vector<std::string> bond_members(const std::string& name, const std::string& sys_root) {
  std::vector<std::string> members;
  if (!is_valid_nic_name(name)) return members;
  std::ifstream file(nic_dir(sys_root, name) + "/bonding/slaves");
  std::string member;
  while (file >> member && members.size() < kMaxNics)
    if (is_valid_nic_name(member)) members.push_back(member);
  return members;
}

std::string nic_holding(const sockaddr* address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string name;
  for (const ifaddrs* entry = list; entry; entry = entry->ifa_next)
    if (entry->ifa_addr && same_address(entry->ifa_addr, address)) {
      name = entry->ifa_name;
      break;
    }
  ::freeifaddrs(list);
  // An alias ("eth0:1") counts on its interface.
  return name.substr(0, name.find(':'));
}

}  // namespace testio::net
