#include "control/protocol.hpp"

#include <gtest/gtest.h>

namespace testio::control {
namespace {

config::Limits limits;

nlohmann::json valid_request() {
  TestRequest request;
  request.connections = 4;
  request.duration_s = 3;
  request.client_version = "test";
  return to_json(request);
}

TEST(Preamble, RoundTrip) {
  Preamble data{ConnectionKind::data, kProtocolVersion, 0x0123456789abcdefull, 31};
  DecodedPreamble decoded = decode_preamble(encode_preamble(data));
  ASSERT_EQ(decoded.status, DecodedPreamble::Status::ok);
  EXPECT_EQ(decoded.preamble.kind, ConnectionKind::data);
  EXPECT_EQ(decoded.preamble.test_id, 0x0123456789abcdefull);
  EXPECT_EQ(decoded.preamble.stream, 31u);
}

TEST(Preamble, RejectsOtherProtocolsKindsAndVersions) {
  PreambleBytes bytes = encode_preamble({});
  bytes[0] = 'a';  // an iperf3 cookie starts with a printable character
  EXPECT_EQ(decode_preamble(bytes).status, DecodedPreamble::Status::not_testio);
  bytes = encode_preamble({});
  bytes[4] = 'X';
  EXPECT_EQ(decode_preamble(bytes).status, DecodedPreamble::Status::bad_kind);
  bytes = encode_preamble({});
  bytes[5] = 99;
  DecodedPreamble decoded = decode_preamble(bytes);
  EXPECT_EQ(decoded.status, DecodedPreamble::Status::bad_version);
  EXPECT_EQ(decoded.preamble.version, 99);
}

TEST(TestRequestMessage, RoundTrip) {
  TestRequest request = parse_test_request(valid_request(), limits);
  EXPECT_EQ(request.connections, 4u);
  EXPECT_EQ(request.duration_s, 3.0);
  EXPECT_EQ(request.recv_mode, config::RecvMode::recv_into);
}

TEST(TestRequestMessage, EveryFieldIsCheckedAgainstTypesAndCaps) {
  struct Case {
    const char* field;
    nlohmann::json value;
  };
  const Case cases[] = {
      {"connections", 0},          {"connections", 100000},   {"connections", -1},
      {"connections", "4"},        {"connections", 2.5},      {"duration_s", -1},
      {"duration_s", 1e12},        {"duration_s", "10"},      {"buffer", 0},
      {"buffer", 1ull << 40},      {"window", 1ull << 40},    {"threads", 100000},
      {"recv_mode", "mmap"},       {"recv_mode", 3},          {"client_version", std::string(1000, 'x')},
      {"total_bytes", -5},         {"type", "start"},         {"client_threads", 0},
  };
  for (const Case& c : cases) {
    nlohmann::json message = valid_request();
    message[c.field] = c.value;
    EXPECT_THROW(parse_test_request(message, limits), ProtocolError) << c.field << " = " << c.value;
  }
  for (const char* field : {"connections", "duration_s", "buffer", "recv_mode", "type"}) {
    nlohmann::json message = valid_request();
    message.erase(field);
    EXPECT_THROW(parse_test_request(message, limits), ProtocolError) << "without " << field;
  }
}

TEST(TestRequestMessage, NeedsATimeOrAByteCount) {
  nlohmann::json message = valid_request();
  message["duration_s"] = 0;
  message["total_bytes"] = 0;
  EXPECT_THROW(parse_test_request(message, limits), ProtocolError);
  message["total_bytes"] = 1000;
  EXPECT_NO_THROW(parse_test_request(message, limits));
}

TEST(ErrorMessage, BecomesPeerErrorWithTheSentence) {
  try {
    parse_test_accepted(error_message("the server is busy", "busy"), limits);
    FAIL() << "no exception";
  } catch (const PeerError& error) {
    EXPECT_STREQ(error.what(), "the server is busy");
    EXPECT_EQ(error.code(), "busy");
  }
  EXPECT_THROW(fail_unexpected(error_message("gone", "x"), "now"), PeerError);
  EXPECT_THROW(fail_unexpected(start_message(), "now"), ProtocolError);
}

TEST(StreamsReportMessage, RoundTripAndStreamCount) {
  StreamsReport report;
  report.streams.push_back({1000, 10, 0.0, 1.5, false});
  report.streams.push_back({2000, 20, 0.1, 1.4, true});
  StreamsReport back = parse_streams_report(to_json(report, "results"), "results", 2);
  ASSERT_EQ(back.streams.size(), 2u);
  EXPECT_EQ(back.streams[1].bytes, 2000u);
  EXPECT_TRUE(back.streams[1].failed);
  EXPECT_DOUBLE_EQ(back.streams[0].end_s, 1.5);
  EXPECT_THROW(parse_streams_report(to_json(report, "results"), "results", 3), ProtocolError);
  EXPECT_THROW(parse_streams_report(to_json(report, "results"), "sender_done", 2), ProtocolError);
  nlohmann::json broken = to_json(report, "results");
  broken["streams"][0]["bytes"] = "many";
  EXPECT_THROW(parse_streams_report(broken, "results", 2), ProtocolError);
}

}  // namespace
}  // namespace testio::control
