// libFuzzer target: an rtnetlink dump of qdiscs, as the kernel answers RTM_GETQDISC (the seeds:
// hand-built dumps and one host's own answer). The parser must read any bytes at any alignment
// without crashing; what it keeps is for the interface asked, a root exactly when its parent is
// TC_H_ROOT, at most one per message's worth of bytes, and the same wherever the bytes sit.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "net/qdisc_stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using testio::net::QdiscStats;
  // The interface asked: the first message's own (tcmsg's tcm_ifindex, after the 16-byte netlink
  // header and 4 bytes of family and padding), so the seeds' qdiscs are kept and read whole.
  int ifindex = 0;
  if (size >= 24) std::memcpy(&ifindex, data + 20, sizeof(ifindex));
  const std::vector<QdiscStats> qdiscs = testio::net::parse_qdisc_dump(data, size, ifindex);
  constexpr std::size_t kSmallestMessage = 16 + 20;  // nlmsghdr and tcmsg
  if (qdiscs.size() > size / kSmallestMessage) __builtin_trap();
  bool any_root = false;
  for (const QdiscStats& qdisc : qdiscs) {
    if (qdisc.root != (qdisc.parent == 0xFFFFFFFFu)) __builtin_trap();
    if (qdisc.kind.size() >= size || qdisc.kind.find('\0') != std::string::npos) __builtin_trap();
    any_root = any_root || qdisc.root;
  }
  if (testio::net::root_qdisc(qdiscs).has_value() != any_root) __builtin_trap();
  // The same bytes one past an aligned address read the same.
  std::vector<unsigned char> shifted(size + 1);
  if (size > 0) std::memcpy(shifted.data() + 1, data, size);
  const std::vector<QdiscStats> again = testio::net::parse_qdisc_dump(shifted.data() + 1, size, ifindex);
  if (again.size() != qdiscs.size()) __builtin_trap();
  for (std::size_t i = 0; i < again.size(); ++i)
    if (again[i].kind != qdiscs[i].kind || again[i].bytes != qdiscs[i].bytes || again[i].drops != qdiscs[i].drops ||
        again[i].handle != qdiscs[i].handle)
      __builtin_trap();
  return 0;
}
