#include "net/qdisc_stats.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "util/unique_fd.hpp"

namespace testio::net {
namespace {

using Bytes = std::span<const unsigned char>;

// A dump answer is read whole before it is parsed; a host with more qdiscs than fit in this is
// not one whose dump we wait for.
constexpr std::size_t kMaxDumpBytes = 16u << 20;
// The kernel fills a dump's buffers up to 32 KiB (netlink's largest dump skb); twice that leaves
// room, and a bigger one still would come back cut (MSG_TRUNC), which ends the read.
constexpr std::size_t kReceiveBytes = 64u << 10;
// The legacy tc_stats up to its last field, without the padding the kernel adds after it.
constexpr std::size_t kLegacyStatsBytes = offsetof(tc_stats, backlog) + sizeof(tc_stats::backlog);

// A copy of the T at the front of `bytes` (none of the input is read in place: it may sit at any
// alignment); false when fewer than `needed` bytes are there. Fields past `needed` that the
// bytes lack stay zero.
template <typename T>
bool copy_front(Bytes bytes, T& value, std::size_t needed = sizeof(T)) {
  if (bytes.size() < needed) return false;
  value = T{};
  std::memcpy(&value, bytes.data(), std::min(bytes.size(), sizeof(T)));
  return true;
}

// Calls each_message(header, body) for every netlink message of `data` whose length fits; stops at
// the first that does not, or when each_message returns false.
template <typename EachMessage>
void for_each_message(Bytes data, EachMessage each_message) {
  nlmsghdr header;
  while (copy_front(data, header)) {
    if (header.nlmsg_len < sizeof(nlmsghdr) || header.nlmsg_len > data.size()) return;
    if (!each_message(header, data.subspan(NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN))) return;
    data = data.subspan(std::min<std::size_t>(NLMSG_ALIGN(header.nlmsg_len), data.size()));
  }
}

// Calls each_attribute(type, payload) for every attribute of `area` whose length fits; stops at
// the first that does not. The nested and byte-order flags are masked off the type.
template <typename EachAttribute>
void for_each_attribute(Bytes area, EachAttribute each_attribute) {
  rtattr header;
  while (copy_front(area, header)) {
    if (header.rta_len < sizeof(rtattr) || header.rta_len > area.size()) return;
    each_attribute(header.rta_type & NLA_TYPE_MASK, area.subspan(RTA_LENGTH(0), header.rta_len - RTA_LENGTH(0)));
    area = area.subspan(std::min<std::size_t>(RTA_ALIGN(header.rta_len), area.size()));
  }
}

// TCA_STATS2's nest: TCA_STATS_BASIC, TCA_STATS_QUEUE and, past 2^32 packets, TCA_STATS_PKT64.
// Returns which of basic and queue it held, so the legacy TCA_STATS fills only what is missing.
struct StatsFound {
  bool basic = false, queue = false;
};
StatsFound read_stats2(Bytes nest, QdiscStats& qdisc) {
  StatsFound found;
  std::uint64_t packets64 = 0;
  for_each_attribute(nest, [&](int type, Bytes payload) {
    gnet_stats_basic basic;
    gnet_stats_queue queue;
    // The kernel sends the padded struct; bytes and packets are its first 12.
    if (type == TCA_STATS_BASIC && copy_front(payload, basic, sizeof(basic.bytes) + sizeof(basic.packets))) {
      qdisc.bytes = basic.bytes;
      qdisc.packets = basic.packets;
      found.basic = true;
    } else if (type == TCA_STATS_QUEUE && copy_front(payload, queue)) {
      qdisc.qlen = queue.qlen;
      qdisc.backlog_bytes = queue.backlog;
      qdisc.drops = queue.drops;
      qdisc.requeues = queue.requeues;
      qdisc.overlimits = queue.overlimits;
      found.queue = true;
    } else if (type == TCA_STATS_PKT64) {
      copy_front(payload, packets64);
    }
  });
  if (found.basic && packets64 > qdisc.packets) qdisc.packets = packets64;
  return found;
}

// One RTM_NEWQDISC message's body: its tcmsg, then TCA_KIND, TCA_STATS2 and the legacy TCA_STATS.
std::optional<QdiscStats> read_qdisc(Bytes body, int ifindex) {
  tcmsg header;
  if (!copy_front(body, header) || header.tcm_ifindex != ifindex) return std::nullopt;
  QdiscStats qdisc;
  qdisc.handle = header.tcm_handle;
  qdisc.parent = header.tcm_parent;
  qdisc.root = header.tcm_parent == TC_H_ROOT;
  StatsFound found;
  std::optional<tc_stats> legacy;
  auto read_attribute = [&](int type, Bytes payload) {
    tc_stats stats;
    if (type == TCA_KIND) {
      const auto* text = reinterpret_cast<const char*>(payload.data());
      qdisc.kind.assign(text, ::strnlen(text, payload.size()));
    } else if (type == TCA_STATS2) {
      found = read_stats2(payload, qdisc);
    } else if (type == TCA_STATS && copy_front(payload, stats, kLegacyStatsBytes)) {
      legacy = stats;
    }
  };
  for_each_attribute(body.subspan(std::min<std::size_t>(NLMSG_ALIGN(sizeof(tcmsg)), body.size())), read_attribute);
  if (legacy && !found.basic) {
    qdisc.bytes = legacy->bytes;
    qdisc.packets = legacy->packets;
  }
  if (legacy && !found.queue) {
    qdisc.drops = legacy->drops;
    qdisc.overlimits = legacy->overlimits;
    qdisc.qlen = legacy->qlen;
    qdisc.backlog_bytes = legacy->backlog;
  }
  return qdisc;
}

// Whether `answer` holds the end of the dump (NLMSG_DONE), or an error that ends it.
bool dump_ended(Bytes answer) {
  bool ended = false;
  for_each_message(answer, [&](const nlmsghdr& header, Bytes) {
    ended = header.nlmsg_type == NLMSG_DONE || header.nlmsg_type == NLMSG_ERROR;
    return !ended;
  });
  return ended;
}

// The whole answer to a dump of every qdisc (the kernel dumps every device's, whatever the
// request's ifindex), each recv()'s buffer after the one before; empty on any failure.
std::vector<unsigned char> dump_qdiscs() {
  const util::UniqueFd socket(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!socket.valid()) return {};
  const timeval limit{1, 0};
  ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  struct {
    nlmsghdr header;
    tcmsg qdisc;
  } request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(tcmsg));
  request.header.nlmsg_type = RTM_GETQDISC;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.qdisc.tcm_family = AF_UNSPEC;
  if (::send(socket.get(), &request, request.header.nlmsg_len, 0) < 0) return {};
  std::vector<unsigned char> answer;
  std::vector<unsigned char> buffer(kReceiveBytes);
  while (answer.size() < kMaxDumpBytes) {
    const ssize_t got = ::recv(socket.get(), buffer.data(), buffer.size(), MSG_TRUNC);
    if (got <= 0 || static_cast<std::size_t>(got) > buffer.size()) return {};
    const Bytes received(buffer.data(), static_cast<std::size_t>(got));
    answer.insert(answer.end(), received.begin(), received.end());
    if (dump_ended(received)) return answer;
  }
  return {};
}

}  // namespace

std::vector<QdiscStats> parse_qdisc_dump(const unsigned char* data, std::size_t size, int ifindex) {
  std::vector<QdiscStats> qdiscs;
  if (!data) return qdiscs;
  for_each_message(Bytes(data, size), [&](const nlmsghdr& header, Bytes body) {
    if (header.nlmsg_type == RTM_NEWQDISC)
      if (std::optional<QdiscStats> qdisc = read_qdisc(body, ifindex)) qdiscs.push_back(std::move(*qdisc));
    return true;
  });
  return qdiscs;
}

std::vector<QdiscStats> read_qdiscs(const std::string& device) {
  const unsigned ifindex = ::if_nametoindex(device.c_str());
  if (ifindex == 0) return {};
  const std::vector<unsigned char> answer = dump_qdiscs();
  return parse_qdisc_dump(answer.data(), answer.size(), static_cast<int>(ifindex));
}

std::optional<QdiscStats> root_qdisc(const std::vector<QdiscStats>& qdiscs) {
  std::optional<QdiscStats> sum;
  for (const QdiscStats& qdisc : qdiscs) {
    if (!qdisc.root) continue;
    if (!sum) {
      sum = qdisc;
      continue;
    }
    sum->bytes += qdisc.bytes;
    sum->packets += qdisc.packets;
    sum->drops += qdisc.drops;
    sum->overlimits += qdisc.overlimits;
    sum->requeues += qdisc.requeues;
    sum->backlog_bytes += qdisc.backlog_bytes;
    sum->qlen += qdisc.qlen;
  }
  return sum;
}

}  // namespace testio::net
