// Multipath TCP (RFC 8684) sockets for --mptcp: the client's data connections and the server's
// listener. The kernel's path managers add and remove subflows; testio only opens the sockets
// and reads how many subflows a connection has.
#pragma once

namespace testio::net {

// A new, unconnected MPTCP stream socket of `family` (AF_INET or AF_INET6). Throws
// std::runtime_error with one sentence when this host cannot open one (net.mptcp.enabled = 0,
// or a kernel built without MPTCP).
int open_mptcp_socket(int family);

// The subflows MPTCP connection `fd` has now: its first one and those the path managers added.
// 0 for a plain TCP socket and for an MPTCP connection that fell back to TCP (its peer did not
// answer in MPTCP), so a 0 on a --mptcp connection says the test ran as plain TCP.
int mptcp_subflows(int fd) noexcept;

}  // namespace testio::net
