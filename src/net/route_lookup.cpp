#include "net/route_lookup.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

namespace testio::net {
namespace {

constexpr std::size_t kRequestSpace = 256;

struct Request {
  nlmsghdr header;
  rtmsg route;
  alignas(NLMSG_ALIGNTO) unsigned char attributes[kRequestSpace];
};

void add_attribute(Request& request, unsigned short type, const void* value, std::size_t size) {
  const std::size_t at = NLMSG_ALIGN(request.header.nlmsg_len);
  auto* attribute = reinterpret_cast<rtattr*>(reinterpret_cast<unsigned char*>(&request) + at);
  attribute->rta_type = type;
  attribute->rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
  std::memcpy(RTA_DATA(attribute), value, size);
  request.header.nlmsg_len = static_cast<std::uint32_t>(at + RTA_ALIGN(attribute->rta_len));
}

// The address bytes and port of a sockaddr_in or sockaddr_in6; false for any other family.
bool address_of(const sockaddr* address, const void*& bytes, std::size_t& size, std::uint16_t& port_be) {
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    bytes = &v4->sin_addr;
    size = sizeof(in_addr);
    port_be = v4->sin_port;
    return true;
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    bytes = &v6->sin6_addr;
    size = sizeof(in6_addr);
    port_be = v6->sin6_port;
    return true;
  }
  return false;
}

std::string gateway_text(int family, const rtattr* attribute) {
  const std::size_t size = RTA_PAYLOAD(attribute);
  if (size != (family == AF_INET ? sizeof(in_addr) : sizeof(in6_addr))) return {};
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (!::inet_ntop(family, RTA_DATA(attribute), text.data(), text.size())) return {};
  return text.data();
}

// RTA_MULTIPATH: a run of rtnexthop records, each followed by its own attributes.
bool parse_multipath(int family, const rtattr* multipath, std::vector<Nexthop>& nexthops) {
  const auto* data = static_cast<const unsigned char*>(RTA_DATA(multipath));
  std::size_t left = RTA_PAYLOAD(multipath);
  while (left >= sizeof(rtnexthop)) {
    rtnexthop hop;
    std::memcpy(&hop, data, sizeof(hop));
    if (hop.rtnh_len < sizeof(rtnexthop) || hop.rtnh_len > left) return false;
    Nexthop nexthop;
    nexthop.ifindex = hop.rtnh_ifindex;
    int inner = static_cast<int>(hop.rtnh_len - RTNH_ALIGN(sizeof(rtnexthop)));
    for (auto* attribute = reinterpret_cast<const rtattr*>(data + RTNH_ALIGN(sizeof(rtnexthop)));
         inner > 0 && RTA_OK(attribute, inner); attribute = RTA_NEXT(attribute, inner))
      if (attribute->rta_type == RTA_GATEWAY) nexthop.gateway = gateway_text(family, attribute);
    nexthops.push_back(nexthop);
    const std::size_t step = RTNH_ALIGN(hop.rtnh_len);
    if (step >= left) break;
    data += step;
    left -= step;
  }
  return true;
}

RouteReply parse_route_message(const nlmsghdr* message) {
  RouteReply reply;
  if (message->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return {{}, "a route reply too short to read"};
  const auto* route = static_cast<const rtmsg*>(NLMSG_DATA(message));
  Nexthop single;
  int size = static_cast<int>(message->nlmsg_len - NLMSG_LENGTH(sizeof(rtmsg)));
  for (const rtattr* attribute = RTM_RTA(route); RTA_OK(attribute, size); attribute = RTA_NEXT(attribute, size)) {
    if (attribute->rta_type == RTA_OIF && RTA_PAYLOAD(attribute) == sizeof(int))
      std::memcpy(&single.ifindex, RTA_DATA(attribute), sizeof(int));
    else if (attribute->rta_type == RTA_GATEWAY)
      single.gateway = gateway_text(route->rtm_family, attribute);
    else if (attribute->rta_type == RTA_MULTIPATH && !parse_multipath(route->rtm_family, attribute, reply.nexthops))
      return {{}, "a multipath route reply that does not parse"};
  }
  if (reply.nexthops.empty() && single.ifindex > 0) reply.nexthops.push_back(single);
  if (reply.nexthops.empty()) reply.error = "the route names no interface";
  return reply;
}

RouteReply lookup(const sockaddr* given_local, const sockaddr* given_remote, int protocol, bool fib_match) {
  const FlowEnds ends(given_local, given_remote);
  const sockaddr* local = ends.local();
  const sockaddr* remote = ends.remote();
  const void* to = nullptr;
  const void* from = nullptr;
  std::size_t to_size = 0, from_size = 0;
  std::uint16_t dport = 0, sport = 0;
  if (!address_of(remote, to, to_size, dport) || !address_of(local, from, from_size, sport) ||
      local->sa_family != remote->sa_family)
    return {{}, "not an IP flow"};
  Request request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  request.header.nlmsg_type = RTM_GETROUTE;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.route.rtm_family = static_cast<unsigned char>(remote->sa_family);
  request.route.rtm_dst_len = static_cast<unsigned char>(to_size * 8);
  request.route.rtm_src_len = static_cast<unsigned char>(from_size * 8);
  if (fib_match) request.route.rtm_flags = RTM_F_FIB_MATCH;
  add_attribute(request, RTA_DST, to, to_size);
  add_attribute(request, RTA_SRC, from, from_size);
  if (!fib_match) {
    const auto ip_protocol = static_cast<std::uint8_t>(protocol);
    add_attribute(request, RTA_IP_PROTO, &ip_protocol, sizeof(ip_protocol));
    add_attribute(request, RTA_SPORT, &sport, sizeof(sport));
    add_attribute(request, RTA_DPORT, &dport, sizeof(dport));
  }
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return {{}, std::string("no netlink socket: ") + std::strerror(errno)};
  std::array<unsigned char, 16384> buffer{};
  ssize_t got = -1;
  timeval limit{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  if (::send(fd, &request, request.header.nlmsg_len, 0) >= 0) got = ::recv(fd, buffer.data(), buffer.size(), 0);
  const int error = errno;
  ::close(fd);
  if (got < 0) return {{}, std::string("the route lookup failed: ") + std::strerror(error)};
  RouteReply reply = parse_route_reply(buffer.data(), static_cast<std::size_t>(got));
  for (Nexthop& nexthop : reply.nexthops) {
    std::array<char, IF_NAMESIZE> name{};
    if (::if_indextoname(static_cast<unsigned>(nexthop.ifindex), name.data())) nexthop.device = name.data();
  }
  return reply;
}

}  // namespace

RouteReply parse_route_reply(const unsigned char* data, std::size_t size) {
  if (size < sizeof(nlmsghdr)) return {{}, "no route reply"};
  // The netlink macros read headers in place: an aligned copy keeps that safe for any buffer.
  alignas(nlmsghdr) std::array<unsigned char, 16384> aligned{};
  size = std::min(size, aligned.size());
  std::memcpy(aligned.data(), data, size);
  int left = static_cast<int>(size);
  for (auto* message = reinterpret_cast<const nlmsghdr*>(aligned.data()); NLMSG_OK(message, left);
       message = NLMSG_NEXT(message, left)) {
    if (message->nlmsg_type == NLMSG_ERROR) {
      if (message->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) return {{}, "a netlink error too short to read"};
      const auto* failure = static_cast<const nlmsgerr*>(NLMSG_DATA(message));
      if (failure->error == 0) continue;  // an acknowledgement
      return {{}, std::string("no route: ") + std::strerror(-failure->error)};
    }
    if (message->nlmsg_type == RTM_NEWROUTE) return parse_route_message(message);
  }
  return {{}, "no route in the reply"};
}

sockaddr_storage unmapped(const sockaddr* address) {
  sockaddr_storage result{};
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&result);
      v4->sin_family = AF_INET;
      v4->sin_port = v6->sin6_port;
      std::memcpy(&v4->sin_addr, &v6->sin6_addr.s6_addr[12], sizeof(in_addr));
      return result;
    }
    std::memcpy(&result, address, sizeof(sockaddr_in6));
  } else if (address->sa_family == AF_INET) {
    std::memcpy(&result, address, sizeof(sockaddr_in));
  }
  return result;
}

RouteReply route_of_flow(const sockaddr* local, const sockaddr* remote, int protocol) {
  return lookup(local, remote, protocol, false);
}

RouteReply route_nexthops(const sockaddr* local, const sockaddr* remote) {
  return lookup(local, remote, 0, true);
}

}  // namespace testio::net
