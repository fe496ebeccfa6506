#include "net/qdisc_stats.hpp"

#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace testio::net {
namespace {

using Buffer = std::vector<unsigned char>;

void append(Buffer& to, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  to.insert(to.end(), bytes, bytes + size);
  to.resize(RTA_ALIGN(to.size()));
}

Buffer attribute(unsigned short type, const void* payload, std::size_t size) {
  rtattr header{static_cast<unsigned short>(RTA_LENGTH(size)), type};
  Buffer bytes;
  append(bytes, &header, sizeof(header));
  append(bytes, payload, size);
  return bytes;
}

Buffer nest(unsigned short type, const std::vector<Buffer>& inside) {
  Buffer payload;
  for (const Buffer& part : inside) payload.insert(payload.end(), part.begin(), part.end());
  return attribute(type, payload.data(), payload.size());
}

Buffer kind(const char* name) { return attribute(TCA_KIND, name, std::strlen(name) + 1); }

Buffer stats2(std::uint64_t bytes, std::uint32_t packets, gnet_stats_queue queue) {
  gnet_stats_basic basic{};
  basic.bytes = bytes;
  basic.packets = packets;
  return nest(TCA_STATS2, {attribute(TCA_STATS_BASIC, &basic, sizeof(basic)),
                           attribute(TCA_STATS_QUEUE, &queue, sizeof(queue))});
}

Buffer message(std::uint16_t type, const void* header, std::size_t header_size, const std::vector<Buffer>& attributes) {
  Buffer body;
  append(body, header, header_size);
  for (const Buffer& part : attributes) body.insert(body.end(), part.begin(), part.end());
  nlmsghdr netlink{};
  netlink.nlmsg_len = static_cast<std::uint32_t>(NLMSG_LENGTH(body.size()));
  netlink.nlmsg_type = type;
  netlink.nlmsg_flags = NLM_F_MULTI;
  Buffer bytes;
  append(bytes, &netlink, sizeof(netlink));
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

Buffer qdisc(int ifindex, std::uint32_t handle, std::uint32_t parent, const std::vector<Buffer>& attributes) {
  tcmsg header{};
  header.tcm_family = AF_UNSPEC;
  header.tcm_ifindex = ifindex;
  header.tcm_handle = handle;
  header.tcm_parent = parent;
  return message(RTM_NEWQDISC, &header, sizeof(header), attributes);
}

Buffer done() {
  const int status = 0;
  return message(NLMSG_DONE, &status, sizeof(status), {});
}

Buffer joined(const std::vector<Buffer>& parts) {
  Buffer all;
  for (const Buffer& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::vector<QdiscStats> parse(const Buffer& dump, int ifindex) { return parse_qdisc_dump(dump.data(), dump.size(), ifindex); }

// Device 2: a tbf at the root (TCA_STATS2, the legacy TCA_STATS after it with other figures, as
// an older layout would have them) and a pfifo under it with only the legacy TCA_STATS; device 3
// a noqueue root.
Buffer tbf_root() {
  tc_stats legacy{};
  legacy.bytes = 1;
  legacy.drops = 1;
  return qdisc(2, 0x80010000, TC_H_ROOT,
               {kind("tbf"), stats2(123456789012, 4000, {3, 4500, 17, 2, 99}),
                attribute(TCA_STATS, &legacy, sizeof(legacy))});
}
Buffer pfifo_child() {
  tc_stats legacy{};
  legacy.bytes = 5000;
  legacy.packets = 5;
  legacy.drops = 6;
  legacy.overlimits = 7;
  legacy.qlen = 8;
  legacy.backlog = 9000;
  return qdisc(2, 0x10000, 0x80010001, {kind("pfifo"), attribute(TCA_STATS, &legacy, sizeof(legacy))});
}
Buffer noqueue_root() { return qdisc(3, 0, TC_H_ROOT, {kind("noqueue"), stats2(0, 0, {})}); }
Buffer good_dump() { return joined({tbf_root(), noqueue_root(), pfifo_child(), done()}); }

TEST(QdiscDump, KeepsTheDevicesQdiscsWithTheirCounters) {
  const std::vector<QdiscStats> qdiscs = parse(good_dump(), 2);
  ASSERT_EQ(qdiscs.size(), 2u);
  const QdiscStats& tbf = qdiscs[0];
  EXPECT_EQ(tbf.kind, "tbf");
  EXPECT_EQ(tbf.handle, 0x80010000u);
  EXPECT_EQ(tbf.parent, TC_H_ROOT);
  EXPECT_TRUE(tbf.root);
  EXPECT_EQ(tbf.bytes, 123456789012u);  // TCA_STATS2 wins over the legacy figures
  EXPECT_EQ(tbf.packets, 4000u);
  EXPECT_EQ(tbf.qlen, 3u);
  EXPECT_EQ(tbf.backlog_bytes, 4500u);
  EXPECT_EQ(tbf.drops, 17u);
  EXPECT_EQ(tbf.requeues, 2u);
  EXPECT_EQ(tbf.overlimits, 99u);
  const QdiscStats& pfifo = qdiscs[1];
  EXPECT_EQ(pfifo.kind, "pfifo");
  EXPECT_FALSE(pfifo.root);
  EXPECT_EQ(pfifo.parent, 0x80010001u);
  EXPECT_EQ(pfifo.bytes, 5000u);  // from the legacy tc_stats
  EXPECT_EQ(pfifo.packets, 5u);
  EXPECT_EQ(pfifo.drops, 6u);
  EXPECT_EQ(pfifo.overlimits, 7u);
  EXPECT_EQ(pfifo.qlen, 8u);
  EXPECT_EQ(pfifo.backlog_bytes, 9000u);
  EXPECT_EQ(pfifo.requeues, 0u);
  const std::vector<QdiscStats> other = parse(good_dump(), 3);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].kind, "noqueue");
  EXPECT_TRUE(other[0].root);
}

TEST(QdiscDump, AnotherIfindexKeepsNothing) {
  EXPECT_TRUE(parse(good_dump(), 4).empty());
  EXPECT_TRUE(parse(good_dump(), 0).empty());
}

TEST(QdiscDump, SeveralReceiveBuffersEndToEnd) {
  // What two recv() calls return, each buffer whole: the second ends with NLMSG_DONE.
  const Buffer first = joined({tbf_root(), noqueue_root()});
  const Buffer second = joined({pfifo_child(), done()});
  EXPECT_EQ(parse(joined({first, second}), 2).size(), 2u);
}

TEST(QdiscDump, PacketsPast32BitsFromPkt64) {
  gnet_stats_basic basic{};
  basic.bytes = 1;
  basic.packets = 7;  // the low 32 bits, as the kernel fills it
  const std::uint64_t packets = (std::uint64_t{1} << 32) + 7;
  const Buffer stats = nest(TCA_STATS2, {attribute(TCA_STATS_BASIC, &basic, sizeof(basic)),
                                         attribute(TCA_STATS_PKT64, &packets, sizeof(packets))});
  const std::vector<QdiscStats> qdiscs = parse(qdisc(2, 0, TC_H_ROOT, {kind("fq"), stats}), 2);
  ASSERT_EQ(qdiscs.size(), 1u);
  EXPECT_EQ(qdiscs[0].packets, packets);
}

TEST(QdiscDump, TruncatedDumpKeepsTheWholeMessagesBeforeTheCut) {
  const Buffer dump = good_dump();
  const std::size_t first = tbf_root().size();
  // Cut anywhere: never more than the whole, and the first message once it is all there.
  for (std::size_t size = 0; size <= dump.size(); ++size) {
    const std::vector<QdiscStats> qdiscs = parse_qdisc_dump(dump.data(), size, 2);
    EXPECT_LE(qdiscs.size(), 2u);
    if (size < first) {
      EXPECT_TRUE(qdiscs.empty()) << size;
    } else {
      ASSERT_FALSE(qdiscs.empty()) << size;
      EXPECT_EQ(qdiscs[0].kind, "tbf");
      EXPECT_EQ(qdiscs[0].drops, 17u);
    }
  }
  const Buffer cut_in_second(dump.begin(), dump.begin() + static_cast<std::ptrdiff_t>(first + 20));
  EXPECT_EQ(parse(cut_in_second, 2).size(), 1u);
}

TEST(QdiscDump, GarbageLengthsStopTheWalk) {
  Buffer huge = good_dump();
  const std::uint32_t too_long = std::numeric_limits<std::uint32_t>::max();
  std::memcpy(huge.data(), &too_long, sizeof(too_long));
  EXPECT_TRUE(parse(huge, 2).empty());
  Buffer too_short = good_dump();
  const std::uint32_t three = 3;
  std::memcpy(too_short.data(), &three, sizeof(three));
  EXPECT_TRUE(parse(too_short, 2).empty());
  // A message too short for its tcmsg is skipped; the walk goes on past it.
  const int ifindex = 2;
  const Buffer stub = message(RTM_NEWQDISC, &ifindex, sizeof(ifindex), {});
  EXPECT_EQ(parse(joined({stub, tbf_root()}), 2).size(), 1u);
  EXPECT_TRUE(parse_qdisc_dump(nullptr, 100, 2).empty());
  EXPECT_TRUE(parse({}, 2).empty());
}

TEST(QdiscDump, AnAttributeLongerThanItsMessageEndsTheAttributes) {
  Buffer broken = tbf_root();
  // The attribute after TCA_KIND ("tbf\0": 8 bytes) is TCA_STATS2: give it a length past the end.
  const std::size_t stats2_at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(tcmsg)) + RTA_ALIGN(RTA_LENGTH(4));
  const std::uint16_t past_the_end = 0xfff0;
  std::memcpy(broken.data() + stats2_at, &past_the_end, sizeof(past_the_end));
  std::vector<QdiscStats> qdiscs = parse(broken, 2);
  ASSERT_EQ(qdiscs.size(), 1u);
  EXPECT_EQ(qdiscs[0].kind, "tbf");
  EXPECT_EQ(qdiscs[0].bytes, 0u);
  EXPECT_EQ(qdiscs[0].drops, 0u);
  // Short payloads are not read past: an 8-byte TCA_STATS_BASIC and a 4-byte TCA_STATS.
  const std::uint64_t eight = 8;
  const std::uint32_t four = 4;
  const Buffer short_stats = qdisc(2, 0, TC_H_ROOT, {kind("htb"), nest(TCA_STATS2, {attribute(TCA_STATS_BASIC, &eight, 8)}),
                                                    attribute(TCA_STATS, &four, 4)});
  qdiscs = parse(short_stats, 2);
  ASSERT_EQ(qdiscs.size(), 1u);
  EXPECT_EQ(qdiscs[0].bytes, 0u);
  // A kind without its terminating NUL stops at the attribute's end.
  qdiscs = parse(qdisc(2, 0, TC_H_ROOT, {attribute(TCA_KIND, "sfqX", 3)}), 2);
  ASSERT_EQ(qdiscs.size(), 1u);
  EXPECT_EQ(qdiscs[0].kind, "sfq");
}

TEST(QdiscDump, InputAtAnyAlignment) {
  const Buffer dump = good_dump();
  Buffer shifted(dump.size() + 1);
  std::memcpy(shifted.data() + 1, dump.data(), dump.size());
  const std::vector<QdiscStats> qdiscs = parse_qdisc_dump(shifted.data() + 1, dump.size(), 2);
  ASSERT_EQ(qdiscs.size(), 2u);
  EXPECT_EQ(qdiscs[0].bytes, 123456789012u);
}

TEST(QdiscDump, RootQdiscIsTheRootOrTheSumOfRoots) {
  std::vector<QdiscStats> device = parse(good_dump(), 2);
  std::optional<QdiscStats> root = root_qdisc(device);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->kind, "tbf");
  EXPECT_EQ(root->drops, 17u);
  EXPECT_FALSE(root_qdisc({device[1]}));
  EXPECT_FALSE(root_qdisc({}));
  // Two devices' qdiscs laid together: their roots added up.
  std::vector<QdiscStats> both = device;
  QdiscStats second = device[0];
  second.kind = "fq_codel";
  second.drops = 3;
  second.backlog_bytes = 500;
  both.push_back(second);
  root = root_qdisc(both);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->kind, "tbf");
  EXPECT_EQ(root->drops, 20u);
  EXPECT_EQ(root->backlog_bytes, 5000u);
  EXPECT_EQ(root->bytes, 2 * 123456789012u);
}

// The kernel's own answer for loopback (noqueue on most hosts; whatever it is, it has a kind).
TEST(QdiscRead, LoopbackHasAQdisc) {
  const std::vector<QdiscStats> qdiscs = read_qdiscs("lo");
  ASSERT_FALSE(qdiscs.empty());
  for (const QdiscStats& qdisc : qdiscs) EXPECT_FALSE(qdisc.kind.empty());
  EXPECT_TRUE(root_qdisc(qdiscs));
  EXPECT_TRUE(read_qdiscs("no-such-dev0").empty());
  EXPECT_TRUE(read_qdiscs("").empty());
}

}  // namespace
}  // namespace testio::net
