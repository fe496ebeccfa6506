#include "protocols/testio/protocol.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace testio::control {
namespace {

spec::Limits limits;

nlohmann::json valid_request() {
  TestRequest request;
  request.spec.connections = 4;
  request.spec.duration_s = 3;
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
  TestRequest request = parse_test_request(valid_request());
  EXPECT_EQ(request.spec.connections, 4u);
  EXPECT_EQ(request.spec.duration_s, 3.0);
  EXPECT_EQ(request.spec.recv_mode, spec::RecvMode::recv_into);
  EXPECT_EQ(request.client_version, "test");
}

// The frame's types and the fields every request carries; the rules and caps of the test it asks
// for are checked next, by the server (tests/session/request_test.cpp).
TEST(TestRequestMessage, EveryFieldIsCheckedAgainstItsType) {
  struct Case {
    const char* field;
    nlohmann::json value;
  };
  const Case cases[] = {
      {"connections", -1},         {"connections", "4"},      {"connections", 2.5},  {"duration_s", "10"},
      {"connections", 1ull << 33}, {"recv_mode", "sendfile"}, {"recv_mode", 3},      {"buffer", -5},
      {"client_version", std::string(1000, 'x')},             {"total_bytes", -5},   {"type", "start"},
      {"client_threads", 0},       {"engine", "fast"},        {"rate_lowat", "no"},  {"hash", "md5"},
      {"settings", "yes"},         {"cpus", "0-3"},           {"iface_stats", "eth0"}, {"workload", 7},
      {"direction", "sideways"},   {"congestion", std::string(300, 'x')},
  };
  for (const Case& c : cases) {
    nlohmann::json message = valid_request();
    message[c.field] = c.value;
    EXPECT_THROW(parse_test_request(message), ProtocolError) << c.field << " = " << c.value;
  }
  for (const char* field : {"connections", "duration_s", "buffer", "recv_mode", "type", "workload"}) {
    nlohmann::json message = valid_request();
    message.erase(field);
    EXPECT_THROW(parse_test_request(message), ProtocolError) << "without " << field;
  }
}

// Fields added after version 1 travel only when they say something, so a request reads as it did
// before they existed.
TEST(TestRequestMessage, NewerFieldsTravelOnlyWhenSet) {
  const nlohmann::json plain = valid_request();
  for (const char* field : {"direction", "send_mode", "rate_bps", "engine", "rate_lowat", "iface_stats", "settings"})
    EXPECT_FALSE(plain.contains(field)) << field;
  TestRequest request;
  request.spec.direction = spec::Direction::bidir;
  request.spec.send_mode = spec::SendMode::sendfile;
  request.spec.rate_bps = 5e8;
  request.spec.fq_rate_bps = 1e9;
  request.spec.marks_follow_rate = false;
  request.spec.iface_stats = std::vector<std::string>{"bond0", "eth1"};
  request.spec.engine = spec::Engine::uring;
  TestRequest back = parse_test_request(to_json(request));
  EXPECT_EQ(back.spec, request.spec);
  EXPECT_FALSE(parse_test_request(plain).spec.iface_stats);  // an older client
  request.spec.iface_stats = std::vector<std::string>{};    // on, the route's interface
  EXPECT_EQ(parse_test_request(to_json(request)).spec.iface_stats, std::vector<std::string>{});
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

TEST(SideResultsMessage, RoundTripWithIntervalsAndStreamCount) {
  SideResults results;
  results.streams.push_back({1000, 10, 0.0, 1.5, false});
  results.streams.push_back({2000, 20, 0.1, 1.4, true});
  stats::IntervalRecord record;
  record.start_s = 0;
  record.end_s = 1;
  record.omitted = true;
  record.streams.resize(2);
  record.streams[1].bytes = 1500;
  record.streams[1].tcp.valid = true;
  record.streams[1].tcp.rtt_us = 42;
  record.streams[1].tcp.delivery_rate_bps = 1ull << 40;
  results.intervals.push_back(record);
  results.cpu = {0.25, 1.5};
  results.wall_s = 2;
  results.congestion = "cubic";
  SideResults back = parse_side_results(to_json(results, "results"), "results", 2);
  ASSERT_EQ(back.streams.size(), 2u);
  EXPECT_EQ(back.streams[1].bytes, 2000u);
  EXPECT_TRUE(back.streams[1].failed);
  EXPECT_DOUBLE_EQ(back.streams[0].end_s, 1.5);
  ASSERT_EQ(back.intervals.size(), 1u);
  EXPECT_TRUE(back.intervals[0].omitted);
  EXPECT_EQ(back.intervals[0].streams[1].bytes, 1500u);
  EXPECT_EQ(back.intervals[0].streams[1].tcp.rtt_us, 42u);
  EXPECT_EQ(back.intervals[0].streams[1].tcp.delivery_rate_bps, 1ull << 40);
  EXPECT_FALSE(back.intervals[0].streams[0].tcp.valid);
  EXPECT_DOUBLE_EQ(back.cpu.system_s, 1.5);
  EXPECT_EQ(back.congestion, "cubic");
  EXPECT_THROW(parse_side_results(to_json(results, "results"), "results", 3), ProtocolError);
  EXPECT_THROW(parse_side_results(to_json(results, "results"), "sender_done", 2), ProtocolError);
}

TEST(SideResultsMessage, UdpFiguresTravelInTotalsAndSamples) {
  SideResults results;
  results.streams.resize(2);
  results.streams[0].udp = {1000, 7, 3, 2, 5, 1, 0.0000125};
  stats::IntervalRecord record;
  record.end_s = 1;
  record.streams.resize(2);
  record.streams[0].udp = {600, 4, 1, 0, 2, 0, 0.00002};
  results.intervals.push_back(record);
  const nlohmann::json message = to_json(results, "results");
  EXPECT_FALSE(message["streams"][1].contains("udp"));            // a stream without datagrams reads as before
  EXPECT_EQ(message["intervals"][0]["streams"][1].size(), 16u);  // a UDP test's samples all carry them
  SideResults back = parse_side_results(message, "results", 2);
  EXPECT_EQ(back.streams[0].udp.datagrams, 1000u);
  EXPECT_EQ(back.streams[0].udp.lost, 7u);
  EXPECT_EQ(back.streams[0].udp.socket_drops, 5u);
  EXPECT_NEAR(back.streams[0].udp.jitter_s, 0.0000125, 1e-9);
  EXPECT_EQ(back.intervals[0].streams[0].udp.datagrams, 600u);
  EXPECT_EQ(back.intervals[0].streams[0].udp.lost, 4u);
  nlohmann::json late = message;
  late["streams"][0]["udp"]["out_of_order"] = 2000;  // more late datagrams than datagrams
  EXPECT_THROW(parse_side_results(late, "results", 2), ProtocolError);
  nlohmann::json short_sample = message;
  short_sample["intervals"][0]["streams"][0].erase(12);
  EXPECT_THROW(parse_side_results(short_sample, "results", 2), ProtocolError);
}

TEST(SideResultsMessage, HostileFieldsAreRejected) {
  SideResults results;
  results.streams.resize(1);
  stats::IntervalRecord record;
  record.streams.resize(1);
  results.intervals.push_back(record);
  const nlohmann::json good = to_json(results, "results");
  auto rejects = [&](auto&& mutate) {
    nlohmann::json message = good;
    mutate(message);
    EXPECT_THROW(parse_side_results(message, "results", 1), ProtocolError) << message.dump();
  };
  rejects([](nlohmann::json& m) { m["streams"][0]["bytes"] = "many"; });
  rejects([](nlohmann::json& m) { m["streams"][0]["bytes"] = -1; });
  rejects([](nlohmann::json& m) { m["streams"][0]["failed"] = 1; });
  rejects([](nlohmann::json& m) { m["intervals"] = 5; });
  rejects([](nlohmann::json& m) { m["intervals"][0]["streams"][0] = nlohmann::json::array({1, 2}); });
  rejects([](nlohmann::json& m) { m["intervals"][0]["streams"][0][3] = 1ull << 40; });
  rejects([](nlohmann::json& m) { m["intervals"][0]["streams"] = nlohmann::json::array(); });
  rejects([](nlohmann::json& m) { m["intervals"][0]["end_s"] = -1; });
  rejects([](nlohmann::json& m) { m["cpu"] = "lots"; });
  rejects([](nlohmann::json& m) { m["cpu"]["user_s"] = -2; });
  rejects([](nlohmann::json& m) { m.erase("congestion"); });
  rejects([](nlohmann::json& m) { m["congestion"] = std::string(100, 'x'); });
  rejects([](nlohmann::json& m) { m["digests"] = nlohmann::json::array({"ab", "cd"}); });
  rejects([](nlohmann::json& m) { m["digests"] = nlohmann::json::array({std::string(200, 'a')}); });
  rejects([](nlohmann::json& m) { m["digests"] = nlohmann::json::array({7}); });
  rejects([](nlohmann::json& m) { m["mptcp_subflows"] = nlohmann::json::array({2, 2}); });
  rejects([](nlohmann::json& m) { m["mptcp_subflows"] = nlohmann::json::array({-1}); });
  rejects([](nlohmann::json& m) { m["mptcp_subflows"] = nlohmann::json::array({1000}); });
}

TEST(SideResultsMessage, MptcpSubflowsTravelPerStreamAndAreOptional) {
  SideResults results;
  results.streams.resize(2);
  EXPECT_FALSE(to_json(results, "sender_done").contains("mptcp_subflows"));
  results.mptcp_subflows = {2, 0};
  SideResults back = parse_side_results(to_json(results, "sender_done"), "sender_done", 2);
  EXPECT_EQ(back.mptcp_subflows, results.mptcp_subflows);
}

TEST(SideResultsMessage, EvidenceTravelsWholeAndIsOptional) {
  SideResults results;
  results.streams.resize(2);
  EXPECT_FALSE(parse_side_results(to_json(results, "results"), "results", 2).evidence.present());
  stats::SideEvidence& evidence = results.evidence;
  evidence.cpus = {0, 3};
  evidence.streams.resize(2);
  evidence.streams[1].tcp.valid = evidence.streams[1].tcp.chrono = true;
  evidence.streams[1].tcp.busy_us = 9'000'000;
  evidence.streams[1].tcp.rwnd_limited_us = 8'000'000;
  evidence.streams[1].tcp.snd_wnd = 11'000;
  evidence.streams[1].app_limited_share = 0.25;
  evidence.threads = {{"testio-w0", 3.5, 1.25}};
  evidence.tcp_ext = {{"TCPToZeroWindowAdv", 129}};
  evidence.missing = {"TCPOFODrop"};
  evidence.qdisc = {"tb1", "tbf", 5, 900, 3000};
  evidence.nic = {"eth0", {1, 2, 3, 4}};
  SideResults back = parse_side_results(to_json(results, "results"), "results", 2);
  ASSERT_TRUE(back.evidence.present());
  EXPECT_EQ(back.evidence.cpus, evidence.cpus);
  EXPECT_EQ(back.evidence.streams[1].tcp.rwnd_limited_us, 8'000'000u);
  EXPECT_EQ(back.evidence.streams[1].tcp.snd_wnd, 11'000u);
  EXPECT_DOUBLE_EQ(back.evidence.streams[1].app_limited_share, 0.25);
  EXPECT_DOUBLE_EQ(back.evidence.threads.at(0).wait_s, 1.25);
  EXPECT_EQ(back.evidence.tcp_ext.at(0).value, 129u);
  EXPECT_EQ(back.evidence.missing, evidence.missing);
  EXPECT_EQ(back.evidence.qdisc.kind, "tbf");
  EXPECT_EQ(back.evidence.qdisc.drops, 5u);
  EXPECT_EQ(back.evidence.nic.device, "eth0");
  EXPECT_EQ(back.evidence.nic.drops.rx_missed, 2u);
  EXPECT_EQ(back.evidence.nic.drops.tx_dropped, 4u);
  // A peer's evidence is checked like any figure: a stream short, a negative time, a huge CPU.
  for (const char* pointer : {"/evidence/streams/0", "/evidence/threads/0/1", "/evidence/cpus/0", "/evidence/nic"}) {
    nlohmann::json message = to_json(results, "results");
    if (std::string(pointer) == "/evidence/streams/0") message["evidence"]["streams"][0] = {1, 2};
    else if (std::string(pointer) == "/evidence/nic") message["evidence"]["nic"]["rx_fifo"] = -3;
    else if (std::string(pointer) == "/evidence/threads/0/1") message["evidence"]["threads"][0][1] = -1;
    else message["evidence"]["cpus"][0] = 5000;
    EXPECT_THROW(parse_side_results(message, "results", 2), ProtocolError) << pointer;
  }
}

TEST(SideResultsMessage, DigestsTravelPerStream) {
  SideResults results;
  results.streams.resize(2);
  results.digests = {"aa", "bb"};
  SideResults back = parse_side_results(to_json(results, "sender_done"), "sender_done", 2);
  EXPECT_EQ(back.digests, results.digests);
}

TEST(SideResultsMessage, NicsAndCoresRoundTripAndAreOptional) {
  SideResults results;
  results.streams.resize(1);
  stats::IntervalRecord record;
  record.streams.resize(1);
  record.nics.push_back({"tb1", {1, 2, 3, 4}});
  record.nics.push_back({"tb2", {5, 6, 7, 1ull << 40}});
  results.intervals.push_back(record);
  results.cores = {{0, 0.5, 0.25}, {3, 1.0, 0.0}};
  SideResults back = parse_side_results(to_json(results, "results"), "results", 1);
  ASSERT_EQ(back.intervals[0].nics.size(), 2u);
  EXPECT_EQ(back.intervals[0].nics[1].name, "tb2");
  EXPECT_EQ(back.intervals[0].nics[1].moved.tx_packets, 1ull << 40);
  EXPECT_EQ(back.intervals[0].nics[0].moved.tx_bytes, 2u);
  ASSERT_EQ(back.cores.size(), 2u);
  EXPECT_EQ(back.cores[1].cpu, 3u);
  EXPECT_DOUBLE_EQ(back.cores[0].softirq, 0.25);

  const nlohmann::json good = to_json(results, "results");
  nlohmann::json older = good;  // a peer without these figures
  older["intervals"][0].erase("nics");
  older.erase("cores");
  EXPECT_TRUE(parse_side_results(older, "results", 1).cores.empty());
  auto rejects = [&](auto&& mutate) {
    nlohmann::json message = good;
    mutate(message);
    EXPECT_THROW(parse_side_results(message, "results", 1), ProtocolError) << message.dump();
  };
  rejects([](nlohmann::json& m) { m["intervals"][0]["nics"][0][0] = "a/b"; });
  rejects([](nlohmann::json& m) { m["intervals"][0]["nics"][0][1] = -1; });
  rejects([](nlohmann::json& m) { m["intervals"][0]["nics"][0] = nlohmann::json::array({"tb1", 1}); });
  rejects([](nlohmann::json& m) {
    m["intervals"][0]["nics"] = std::vector<nlohmann::json>(net::kMaxNics + 1, m["intervals"][0]["nics"][0]);
  });
  rejects([](nlohmann::json& m) { m["cores"][0][1] = 1.5; });
  rejects([](nlohmann::json& m) { m["cores"][0][0] = stats::kMaxCores; });
  rejects([](nlohmann::json& m) { m["cores"][0] = "busy"; });
  rejects([](nlohmann::json& m) { m["cores"] = std::vector<nlohmann::json>(stats::kMaxCores + 1, m["cores"][0]); });
}

TEST(DirectedResultsMessage, ReverseFiguresTravelUnderTheirOwnKey) {
  DirectedResults results;
  results.forward.streams.resize(2);
  results.forward.streams[1].bytes = 7;
  results.reverse.emplace();
  results.reverse->streams.resize(2);
  results.reverse->streams[0].bytes = 11;
  DirectedResults back = parse_directed_results(to_json(results, "results"), "results", 2, 2);
  EXPECT_EQ(back.forward.streams[1].bytes, 7u);
  ASSERT_TRUE(back.reverse);
  EXPECT_EQ(back.reverse->streams[0].bytes, 11u);

  // Missing where expected, present where not, or of the wrong count: each a ProtocolError.
  DirectedResults forward_only;
  forward_only.forward.streams.resize(2);
  EXPECT_THROW(parse_directed_results(to_json(forward_only, "results"), "results", 2, 2), ProtocolError);
  EXPECT_THROW(parse_directed_results(to_json(results, "results"), "results", 2, 0), ProtocolError);
  EXPECT_THROW(parse_directed_results(to_json(results, "results"), "results", 2, 3), ProtocolError);
  nlohmann::json hostile = to_json(results, "results");
  hostile["reverse"] = "everything";
  EXPECT_THROW(parse_directed_results(hostile, "results", 2, 2), ProtocolError);
}

TEST(StopMessage, IsRecognisedAndNothingElseIs) {
  EXPECT_TRUE(is_stop(stop_message()));
  EXPECT_FALSE(is_stop(start_message()));
  EXPECT_FALSE(is_stop(nlohmann::json::object()));
  EXPECT_FALSE(is_stop(nlohmann::json{{"type", 5}}));
}

TEST(SideResultsMessage, ZeroCopyFiguresTravelPerStreamAndAreOptional) {
  SideResults results;
  results.streams.resize(2);
  results.streams[0].bytes = 5000;
  results.streams[0].recv_zerocopy_bytes = 4096;
  results.streams[0].recv_copied_bytes = 904;
  results.streams[1].zerocopy_completed = 7;
  results.streams[1].zerocopy_copied = 7;
  const nlohmann::json message = to_json(results, "results");
  EXPECT_FALSE(message["streams"][0].contains("zerocopy_completed"));  // absent where a mode made none
  EXPECT_FALSE(message["streams"][1].contains("recv_zerocopy_bytes"));
  SideResults back = parse_side_results(message, "results", 2);
  EXPECT_EQ(back.streams[0].recv_zerocopy_bytes, 4096u);
  EXPECT_EQ(back.streams[0].recv_copied_bytes, 904u);
  EXPECT_EQ(back.streams[0].zerocopy_completed, 0u);
  EXPECT_EQ(back.streams[1].zerocopy_completed, 7u);
  EXPECT_EQ(back.streams[1].zerocopy_copied, 7u);
  EXPECT_EQ(back.streams[1].recv_copied_bytes, 0u);

  auto rejects = [&](auto&& mutate) {
    nlohmann::json bad = message;
    mutate(bad);
    EXPECT_THROW(parse_side_results(bad, "results", 2), ProtocolError) << bad.dump();
  };
  rejects([](nlohmann::json& m) { m["streams"][0]["recv_zerocopy_bytes"] = "4096"; });
  rejects([](nlohmann::json& m) { m["streams"][0]["recv_copied_bytes"] = -1; });
  rejects([](nlohmann::json& m) { m["streams"][0]["recv_copied_bytes"] = 1.5; });
  rejects([](nlohmann::json& m) { m["streams"][1]["zerocopy_completed"] = true; });
  rejects([](nlohmann::json& m) { m["streams"][1]["zerocopy_copied"] = 8; });          // more than completed
  rejects([](nlohmann::json& m) { m["streams"][0]["recv_copied_bytes"] = 905; });      // more than bytes
  rejects([](nlohmann::json& m) { m["streams"][0]["recv_zerocopy_bytes"] = 5001; });
}

}  // namespace
}  // namespace testio::control
