// Route lookups by rtnetlink, made as `ip route get` makes them: the nexthop one flow leaves by
// (with its ports and protocol, so a multipath route's layer-4 hash picks what it picks for the
// flow's own packets), and every nexthop of the route entry a destination matches
// (RTM_F_FIB_MATCH, as `ip route get fibmatch`). Lookups run in the caller's network namespace.
// Any thread: each lookup opens its own netlink socket; not for hot paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <netinet/in.h>

namespace testio::net {

struct Nexthop {
  int ifindex = 0;
  std::string device;   // the interface's name, filled in by the lookups (not by the parser)
  std::string gateway;  // empty for a directly connected destination
};

// What one reply said: its nexthops (one for a plain route, each of a multipath one), or the
// kernel's error as a sentence. A reply that does not parse is an error too, never a guess.
struct RouteReply {
  std::vector<Nexthop> nexthops;
  std::string error;
};
RouteReply parse_route_reply(const unsigned char* data, std::size_t size);

// `address` with an IPv4-mapped IPv6 address (a dual-stack socket's view of an IPv4 peer) turned
// into the IPv4 address it is, port kept: the kernel routes and hashes those packets as IPv4.
sockaddr_storage unmapped(const sockaddr* address);

// A flow's two ends, each unmapped.
class FlowEnds {
 public:
  FlowEnds(const sockaddr* local, const sockaddr* remote) : local_(unmapped(local)), remote_(unmapped(remote)) {}
  const sockaddr* local() const noexcept { return reinterpret_cast<const sockaddr*>(&local_); }
  const sockaddr* remote() const noexcept { return reinterpret_cast<const sockaddr*>(&remote_); }

 private:
  sockaddr_storage local_, remote_;
};

// The nexthop a TCP (or `protocol`) flow from `local` to `remote`, ports included, leaves by.
RouteReply route_of_flow(const sockaddr* local, const sockaddr* remote, int protocol);
// Every nexthop of the route entry that `remote` matches from `local` (ports not needed).
RouteReply route_nexthops(const sockaddr* local, const sockaddr* remote);

}  // namespace testio::net
