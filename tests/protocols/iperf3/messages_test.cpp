// iperf3's parameters and results as the peer sends them, and what a hostile peer could send.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "protocols/iperf3/messages.hpp"
#include "protocols/iperf3/wire.hpp"

namespace testio::iperf3 {
namespace {

spec::Limits limits() { return {}; }

TEST(Iperf3Params, ATypicalClientRequestParses) {
  Params params = parse_params(
      R"({"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":8,"len":131072,"pacing_timer":1000,"client_version":"3.12"})",
      limits());
  EXPECT_EQ(params.parallel, 8u);
  EXPECT_EQ(params.time_s, 10);
  EXPECT_EQ(params.len, 131072u);
  EXPECT_FALSE(params.reverse);
  EXPECT_EQ(params.connections(), 8u);
  EXPECT_EQ(params.client_version, "3.12");
}

TEST(Iperf3Params, FlagsAndOptionsAreRead) {
  Params params = parse_params(
      R"({"tcp":true,"time":2.5,"num":0,"parallel":2,"len":1048576,"window":1048576,"MSS":1400,"nodelay":true,"bidirectional":true,"congestion":"reno","authtoken":"x"})",
      limits());
  EXPECT_DOUBLE_EQ(params.time_s, 2.5);
  EXPECT_TRUE(params.bidirectional);
  EXPECT_EQ(params.connections(), 4u);
  EXPECT_EQ(params.window, 1048576u);
  EXPECT_EQ(params.mss, 1400u);
  EXPECT_TRUE(params.nodelay);
  EXPECT_EQ(params.congestion, "reno");
  EXPECT_TRUE(params.authenticated);
}

TEST(Iperf3Params, CountedTestsNeedNoTime) {
  Params params = parse_params(R"({"tcp":true,"time":0,"num":1000,"parallel":1})", limits());
  EXPECT_EQ(params.total_bytes(), 1000u);
  Params blocks = parse_params(R"({"tcp":true,"time":0,"blockcount":3,"len":100})", limits());
  EXPECT_EQ(blocks.total_bytes(), 300u);
}

TEST(Iperf3Params, WhatWeSendRoundTrips) {
  Params params;
  params.time_s = 2;
  params.parallel = 3;
  params.reverse = true;
  params.window = 65536;
  params.mptcp = true;
  params.flow_label = 0x12345;
  params.client_version = "testio-0.1.0";
  std::string text = to_json(params);
  nlohmann::json message = nlohmann::json::parse(text);
  EXPECT_TRUE(message["mptcp"].is_boolean());  // iperf3 reads "mptcp" only as JSON true
  EXPECT_TRUE(message["time"].is_number_integer());  // whole seconds go as integers, as iperf3 sends them
  EXPECT_FALSE(message.contains("bidirectional"));   // false flags are left out
  Params back = parse_params(text, limits());
  EXPECT_TRUE(back.reverse);
  EXPECT_EQ(back.parallel, 3u);
  EXPECT_EQ(back.window, 65536u);
  EXPECT_TRUE(back.mptcp);
  EXPECT_EQ(back.flow_label, 0x12345u);
}

TEST(Iperf3Params, HostileInputIsOneClearError) {
  for (const char* text : {"", "[]", "not json", R"({"parallel":"8"})", R"({"parallel":0})", R"({"parallel":129})",
                           R"({"time":-1})", R"({"time":1e300})", R"({"len":1e12})", R"({"time":0,"num":0})",
                           R"({"reverse":true,"bidirectional":true})", R"({"congestion":"averyveryverylongname"})",
                           R"({"nodelay":"yes"})", R"({"window":2e9})"}) {
    EXPECT_THROW(parse_params(text, limits()), ProtocolError) << text;
  }
  std::string huge = R"({"client_version":")" + std::string(9000, 'x') + R"("})";
  EXPECT_THROW(parse_params(huge, limits()), ProtocolError);
}

TEST(Iperf3Params, UdpAndPacingAreReadSoTheyCanBeRefused) {
  EXPECT_TRUE(parse_params(R"({"udp":true,"time":1})", limits()).udp);
  EXPECT_EQ(parse_params(R"({"bandwidth":100000000,"time":1})", limits()).bandwidth, 100000000u);
}

TEST(Iperf3Results, StreamIdsFollowIperf3sNumbering) {
  EXPECT_EQ(stream_ids(4), (std::vector<std::int32_t>{1, 3, 4, 5}));
  EXPECT_EQ(connection_of(1), 0u);
  EXPECT_EQ(connection_of(3), 1u);
  EXPECT_EQ(connection_of(5), 3u);
  EXPECT_FALSE(connection_of(2));
  EXPECT_FALSE(connection_of(0));
  EXPECT_FALSE(connection_of(-7));
}

TEST(Iperf3Results, WhatWeSendIsWhatIperf3Reads) {
  Results results;
  results.cpu_total = 12.5;
  results.sender_has_retransmits = -1;
  results.streams = {{1, 1000, -1, 0, 1.0}, {3, 2000, -1, 0, 1.0}};
  std::string text = to_json(results);
  nlohmann::json message = nlohmann::json::parse(text);
  for (const char* key : {"cpu_util_total", "cpu_util_user", "cpu_util_system", "sender_has_retransmits", "streams"})
    EXPECT_TRUE(message.contains(key)) << key;
  for (const char* key : {"id", "bytes", "retransmits", "jitter", "errors", "packets", "start_time", "end_time"})
    EXPECT_TRUE(message["streams"][0].contains(key)) << key;
  Results back = parse_results(text, stream_ids(2));
  ASSERT_EQ(back.streams.size(), 2u);
  EXPECT_EQ(back.streams[1].id, 3);
  EXPECT_EQ(back.streams[1].bytes, 2000u);
  EXPECT_DOUBLE_EQ(back.cpu_total, 12.5);
}

TEST(Iperf3Results, ACjsonStyleServerAnswerParses) {
  Results results = parse_results(
      R"({"cpu_util_total":3.1415926535897931,"cpu_util_user":0.5,"cpu_util_system":2.6,"sender_has_retransmits":0,)"
      R"("congestion_used":"cubic","streams":[{"id":1,"bytes":1323796790,"retransmits":-1,"jitter":0,"errors":0,)"
      R"("omitted_errors":0,"packets":0,"omitted_packets":0,"start_time":0,"end_time":1.000123}]})",
      stream_ids(1));
  EXPECT_EQ(results.streams[0].bytes, 1323796790u);
  EXPECT_EQ(results.congestion, "cubic");
  EXPECT_NEAR(results.streams[0].end_s, 1.000123, 1e-9);
}

TEST(Iperf3Results, HostileResultsAreOneClearError) {
  const std::string head = R"({"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":-1,)";
  for (std::string text : {std::string("{}"), std::string("null"), head + R"("streams":{}})", head + R"("streams":[]})",
                           head + R"("streams":[{"id":2,"bytes":1}]})", head + R"("streams":[{"id":1,"bytes":-5}]})",
                           head + R"("streams":[{"bytes":1}]})", head + R"("streams":[1]})",
                           head + R"("streams":[{"id":1,"bytes":1},{"id":1,"bytes":1}]})"}) {
    const std::vector<std::int32_t> ids = text.find("},{") != std::string::npos ? stream_ids(2) : stream_ids(1);
    EXPECT_THROW(parse_results(text, ids), ProtocolError) << text;
  }
}

TEST(Iperf3Wire, CookiesAreThirtySixCharactersAndANul) {
  Cookie cookie = make_cookie();
  EXPECT_EQ(cookie[36], '\0');
  for (std::size_t i = 0; i < 36; ++i) EXPECT_TRUE((cookie[i] >= 'a' && cookie[i] <= 'z') || (cookie[i] >= '2' && cookie[i] <= '7'));
  const auto* bytes = reinterpret_cast<const unsigned char*>(cookie.data());
  EXPECT_TRUE(is_cookie(bytes, kCookieBytes));
  EXPECT_NE(make_cookie(), cookie);
}

TEST(Iperf3Wire, TestioMagicAndBinaryAreNotCookies) {
  const unsigned char magic[] = {0x9e, 't', 'i', 'o'};
  EXPECT_FALSE(may_start_cookie(magic, 4));
  std::array<unsigned char, kCookieBytes> no_nul{};
  no_nul.fill('a');
  EXPECT_FALSE(is_cookie(no_nul.data(), no_nul.size()));
  std::array<unsigned char, kCookieBytes> newline{};
  newline.fill('a');
  newline[10] = '\n';
  newline[36] = 0;
  EXPECT_FALSE(is_cookie(newline.data(), newline.size()));
  EXPECT_FALSE(is_cookie(newline.data(), 10));
}

TEST(Iperf3Wire, StatesAndNumbers) {
  EXPECT_EQ(state_name(4), "TEST_END (4)");
  EXPECT_EQ(state_name(-1), "ACCESS_DENIED (-1)");
  EXPECT_EQ(state_name(77), "unknown state 77");
  auto bytes = encode_u32(0x01020304u);
  EXPECT_EQ(bytes[0], 1);
  EXPECT_EQ(decode_u32(bytes.data()), 0x01020304u);
  EXPECT_EQ(error_text(121), "the server is busy running a test");
  EXPECT_EQ(error_text(9999), "");
}

}  // namespace
}  // namespace testio::iperf3
