// What a server takes from a client: the request's frame (control::parse_test_request) and then
// every rule and cap of the test it asks for (control::check_request, which is workloads::check,
// the same function the client's command line runs before it connects).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "protocols/testio/protocol.hpp"
#include "net/nic_counters.hpp"
#include "protocols/testio/door.hpp"
#include "workloads/part.hpp"
#include "workloads/rr/rr.hpp"
#include "workloads/transfers/transfers.hpp"

namespace testio::server {
namespace {

spec::Limits limits;

nlohmann::json valid_request() {
  control::TestRequest request;
  request.spec.connections = 4;
  request.spec.duration_s = 3;
  request.client_version = "test";
  return control::to_json(request);
}

// The request as the server would take it; throws ProtocolError when it would refuse it.
control::TestRequest taken(const nlohmann::json& message) {
  control::TestRequest request = control::parse_test_request(message);
  control::check_request(request.spec, limits);
  return request;
}

std::string refusal(const nlohmann::json& message) {
  try {
    taken(message);
  } catch (const control::ProtocolError& error) {
    return error.what();
  }
  return "";
}

TEST(Request, EveryFieldIsCheckedAgainstItsCap) {
  struct Case {
    const char* field;
    nlohmann::json value;
  };
  const Case cases[] = {
      {"connections", 0},       {"connections", 100000},  {"duration_s", -1},        {"duration_s", 1e12},
      {"buffer", 0},            {"buffer", 1ull << 40},   {"window", 1ull << 40},    {"threads", 100000},
      {"interval_s", 0.01},     {"omit_s", 1e9},          {"rate_bps", -1},          {"congestion", "no such!"},
      {"cpus", nlohmann::json::array({4096})},            {"workload", "downloads"}, {"total_bytes", 5},
  };
  for (const Case& c : cases) {
    nlohmann::json message = valid_request();
    message[c.field] = c.value;
    std::string why = refusal(message);
    EXPECT_EQ(why.rfind("invalid test request: ", 0), 0u) << c.field << " = " << c.value << ": " << why;
  }
  EXPECT_EQ(refusal(valid_request()), "");
}

TEST(Request, NeedsATimeOrAByteCount) {
  nlohmann::json message = valid_request();
  message["duration_s"] = 0;
  message["total_bytes"] = 0;
  EXPECT_NE(refusal(message), "");
  message["total_bytes"] = 1000;
  EXPECT_EQ(refusal(message), "");
  message["duration_s"] = 5;  // and not both
  EXPECT_NE(refusal(message), "");
}

TEST(Request, TransfersAndHashAreCheckedAgainstCaps) {
  control::TestRequest request;
  request.spec.workload = "transfers";
  request.spec.connections = 100;
  request.spec.duration_s = 0;
  workloads::set_part(request.spec, workloads::transfers::TransfersSpec{1000, 6'000'000, true});
  control::TestRequest back = taken(control::to_json(request));
  EXPECT_EQ(back.spec.settings, request.spec.settings);
  auto rejects = [&](auto&& mutate) {
    nlohmann::json message = control::to_json(request);
    mutate(message);
    EXPECT_NE(refusal(message), "") << message.dump();
  };
  rejects([](nlohmann::json& m) { m["settings"]["transfers"] = 0; });
  rejects([](nlohmann::json& m) { m["settings"]["transfers"] = limits.max_transfers + 1; });
  rejects([](nlohmann::json& m) { m["settings"]["transfer_size"] = 0; });
  rejects([](nlohmann::json& m) { m["settings"]["transfer_size"] = limits.max_transfer_size + 1; });
  rejects([](nlohmann::json& m) { m["duration_s"] = 3; });
  rejects([](nlohmann::json& m) { m["direction"] = "reverse"; m["send_mode"] = "send"; m["rate_bps"] = 0; m["fq_rate_bps"] = 0; });
  rejects([](nlohmann::json& m) { m["hash"] = "sha1"; });
}

TEST(Request, DirectionsRunBulkTestsOnlyAndBidirCountsTwice) {
  control::TestRequest request;
  request.spec.connections = 3;
  request.spec.duration_s = 2;
  request.spec.direction = spec::Direction::bidir;
  request.spec.send_mode = spec::SendMode::sendfile;
  request.spec.rate_bps = 5e8;
  EXPECT_EQ(taken(control::to_json(request)).spec, request.spec);
  nlohmann::json message = control::to_json(request);
  message["connections"] = limits.max_connections / 2 + 1;  // twice that many would be opened
  EXPECT_NE(refusal(message).find("twice"), std::string::npos);
  message = control::to_json(request);
  message["workload"] = "rr";
  EXPECT_NE(refusal(message).find("bulk tests"), std::string::npos);
  message = control::to_json(request);
  message["hash"] = "sha1";
  EXPECT_NE(refusal(message).find("-F"), std::string::npos);
}

TEST(Request, RrNeedsAMessageSizeAndTakesNoByteCount) {
  control::TestRequest request;
  request.spec.workload = "rr";
  workloads::set_part(request.spec, workloads::rr::RrSpec{100, 4, 0});
  EXPECT_EQ(taken(control::to_json(request)).spec.settings, request.spec.settings);
  nlohmann::json message = control::to_json(request);
  message["settings"]["msize"] = 0;
  EXPECT_NE(refusal(message).find("--msize"), std::string::npos);
  message = control::to_json(request);
  message["settings"]["depth"] = 0;
  EXPECT_NE(refusal(message).find("--depth"), std::string::npos);
  message = control::to_json(request);
  message["settings"]["depth"] = "deep";  // each setting of its kind, which the workload's part says
  EXPECT_NE(refusal(message).find("\"depth\" must be a whole number"), std::string::npos);
  message = control::to_json(request);
  message["settings"]["udp_batch"] = 4;  // another workload's
  EXPECT_NE(refusal(message).find("not a setting of the rr workload"), std::string::npos);
  message = control::to_json(request);
  message["total_bytes"] = 10;
  message["duration_s"] = 0;
  EXPECT_NE(refusal(message).find("-n"), std::string::npos);
  // An older client sends a --num test as one without a time and without its count.
  message = control::to_json(request);
  message["duration_s"] = 0;
  EXPECT_EQ(refusal(message), "");
}

TEST(Request, IfaceStatsNamesInterfaces) {
  nlohmann::json message = valid_request();
  message["iface_stats"] = nlohmann::json::array({"bond0", "eth1"});
  EXPECT_EQ(refusal(message), "");
  for (nlohmann::json names : {nlohmann::json::array({"../etc"}), nlohmann::json::array({std::string(16, 'x')}),
                               nlohmann::json(std::vector<std::string>(net::kMaxNics + 1, "eth0"))}) {
    message["iface_stats"] = names;
    EXPECT_NE(refusal(message), "") << names.dump();
  }
}

TEST(Request, SpliceAndMmapRunOnAsioAndOnlyMmapHashes) {
  control::TestRequest request;
  request.client_version = "test";
  for (spec::RecvMode mode : {spec::RecvMode::splice, spec::RecvMode::mmap}) {
    request.spec.recv_mode = mode;
    EXPECT_EQ(taken(control::to_json(request)).spec.recv_mode, mode);
    request.spec.engine = spec::Engine::threads;
    EXPECT_NE(refusal(control::to_json(request)).find("--engine threads"), std::string::npos);
    request.spec.engine = spec::Engine::asio;
  }
  request.spec.hash = util::HashKind::sha1;
  EXPECT_EQ(taken(control::to_json(request)).spec.hash, util::HashKind::sha1);  // mmap
  request.spec.recv_mode = spec::RecvMode::splice;
  EXPECT_EQ(refusal(control::to_json(request)),
            "invalid test request: --recv-mode splice discards the bytes in the kernel, so the server could not "
            "hash them");
}

}  // namespace
}  // namespace testio::server
