#include "engines/zerocopy_completions.hpp"

#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>

namespace testio::engines {

void drain_zerocopy_completions(int fd, stats::StreamCounters& counters) noexcept {
  // Each notification covers a range of send calls, numbered from 0 per socket, and says whether
  // the kernel had to copy after all (it always does for loopback: the data stays on the host).
  alignas(cmsghdr) char control[128];
  std::uint64_t completed = 0, copied = 0;
  for (;;) {
    msghdr message{};
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    if (::recvmsg(fd, &message, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
      const bool recverr = (header->cmsg_level == SOL_IP && header->cmsg_type == IP_RECVERR) ||
                           (header->cmsg_level == SOL_IPV6 && header->cmsg_type == IPV6_RECVERR);
      if (!recverr) continue;
      sock_extended_err notice;
      std::memcpy(&notice, CMSG_DATA(header), sizeof notice);
      if (notice.ee_errno != 0 || notice.ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
      const std::uint64_t calls = static_cast<std::uint64_t>(notice.ee_data - notice.ee_info) + 1;
      completed += calls;
      if (notice.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) copied += calls;
    }
  }
  if (completed) counters.record_zerocopy(completed, copied);
}

}  // namespace testio::engines
