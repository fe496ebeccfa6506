// The test spec: its one JSON mapping (the wire request, a report's start.testio.spec, a
// profile's "spec") and the rules every workload shares.
#include "spec/test_spec.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <variant>

namespace testio::spec {
namespace {

TestSpec everything_set() {
  TestSpec spec;
  spec.workload = "rr";
  spec.connections = 7;
  spec.duration_s = 2.5;
  spec.total_bytes = 0;
  spec.threads = 3;
  spec.buffer = 65536;
  spec.window = 1 << 20;
  spec.recv_mode = RecvMode::mmap;
  spec.send_mode = SendMode::zerocopy;
  spec.engine = Engine::uring;
  spec.direction = Direction::bidir;
  spec.marks_follow_rate = false;
  spec.rate_bps = 1e9;
  spec.fq_rate_bps = 2e9;
  spec.interval_s = 0.5;
  spec.omit_s = 1;
  spec.hash = util::HashKind::sha256;
  spec.congestion = "bbr";
  spec.no_delay = true;
  spec.cpus = {0, 2};
  spec.iface_stats = std::vector<std::string>{"bond0"};
  spec.settings.set("msize", std::uint64_t{4096});
  spec.settings.set("depth", std::uint64_t{8});
  spec.settings.set("reuse", true);
  spec.settings.set("ratio", 0.25);
  spec.settings.set("label", std::string("probe"));
  return spec;
}

TEST(SpecJson, EveryFieldRoundTrips) {
  const TestSpec spec = everything_set();
  EXPECT_EQ(spec_from_json(to_json(spec)), spec);
  EXPECT_EQ(spec_from_json(to_json(TestSpec{})), TestSpec{});
}

TEST(SpecJson, FieldsKeepTheirWireNames) {
  const nlohmann::json json = to_json(everything_set());
  EXPECT_EQ(json["settings"]["msize"], 4096);
  EXPECT_EQ(json["settings"]["reuse"], true);
  EXPECT_EQ(json["settings"]["label"], "probe");
  EXPECT_EQ(json["rate_lowat"], false);
  EXPECT_EQ(json["recv_mode"], "mmap");
  EXPECT_EQ(json["hash"], "sha256");
  EXPECT_EQ(json["iface_stats"], nlohmann::json::array({"bond0"}));
}

// A report says the whole test: the senders' settings of a forward one too, which its request
// leaves out, so the report runs the same test again. The rate travels either way: a server's
// --server-bitrate-limit weighs it.
TEST(SpecJson, AReportWritesEveryField) {
  TestSpec spec;
  spec.rate_bps = 2e8;
  spec.send_mode = SendMode::zerocopy;
  const nlohmann::json request = to_json(spec), report = to_json(spec, Form::report);
  EXPECT_FALSE(request.contains("send_mode"));
  EXPECT_EQ(request["rate_bps"], 2e8);
  EXPECT_EQ(report["rate_bps"], 2e8);
  EXPECT_EQ(report["send_mode"], "zerocopy");
  EXPECT_FALSE(report.contains("iface_stats"));
  EXPECT_EQ(spec_from_json(report), spec);
}

// A workload's settings travel as one object beside the spec's fields, by name: whole numbers,
// numbers, truth values and texts, at most 32; the workload's part says which it takes.
TEST(SpecJson, TheWorkloadsSettingsTravelAsOneObject) {
  nlohmann::json message = to_json(TestSpec{});
  EXPECT_FALSE(message.contains("settings"));
  message["settings"] = {{"msize", 64}, {"skew", -1}, {"gso", false}};
  const TestSpec spec = spec_from_json(message);
  EXPECT_EQ(spec.settings.size(), 3u);
  ASSERT_NE(spec.settings.find("msize"), nullptr);
  EXPECT_EQ(std::get<std::uint64_t>(*spec.settings.find("msize")), 64u);
  EXPECT_EQ(std::get<double>(*spec.settings.find("skew")), -1.0);
  EXPECT_EQ(std::get<bool>(*spec.settings.find("gso")), false);
  EXPECT_EQ(to_json(spec)["settings"], message["settings"]);
  // Said in another order, the same settings make the same spec.
  TestSpec reordered;
  reordered.settings.set("skew", -1.0);
  reordered.settings.set("gso", false);
  reordered.settings.set("msize", std::uint64_t{64});
  EXPECT_EQ(reordered.settings, spec.settings);
  for (const nlohmann::json& bad : {nlohmann::json("x"), nlohmann::json{{"list", {1, 2}}},
                                    nlohmann::json{{"note", std::string(300, 'x')}}}) {
    message["settings"] = bad;
    EXPECT_THROW(spec_from_json(message), SpecError) << bad;
  }
  message["settings"] = nlohmann::json::object();
  for (int i = 0; i < 33; ++i) message["settings"]["s" + std::to_string(i)] = i;
  EXPECT_THROW(spec_from_json(message), SpecError);
}

TEST(SpecJson, AProfileNamesOnlyWhatItChanges) {
  TestSpec base;
  base.connections = 9;
  nlohmann::json profile = {{"buffer", 131072}, {"engine", "threads"}};
  TestSpec spec = spec_from_json(profile, Presence::any, base);
  EXPECT_EQ(spec.connections, 9u);
  EXPECT_EQ(spec.buffer, 131072u);
  EXPECT_EQ(spec.engine, Engine::threads);
  EXPECT_THROW(spec_from_json(profile), SpecError);  // the wire needs its required fields
  EXPECT_THROW(spec_from_json(nlohmann::json::array()), SpecError);
}

TEST(SpecJson, TypeErrorsNameTheField) {
  nlohmann::json json = to_json(TestSpec{});
  json["buffer"] = "2M";
  try {
    spec_from_json(json);
    FAIL() << "a size as text was read";
  } catch (const SpecError& error) {
    EXPECT_STREQ(error.what(), "field \"buffer\" must be a whole number >= 0");
  }
  json = to_json(TestSpec{});
  json["recv_mode"] = "bad\nname";
  try {
    spec_from_json(json);
    FAIL() << "an unknown mode was read";
  } catch (const SpecError& error) {
    EXPECT_STREQ(error.what(), "recv_mode \"bad?name\" is not supported");  // a peer's text, fit for a log line
  }
}

std::string broken_rule(const TestSpec& spec, const Limits& limits = {}) {
  try {
    check_common(spec, limits);
  } catch (const SpecError& error) {
    return error.what();
  }
  return "";
}

TEST(SpecRules, EachRuleSaysWhichOptionBreaksIt) {
  EXPECT_EQ(broken_rule(TestSpec{}), "");
  struct Case {
    void (*change)(TestSpec&);
    const char* mentions;
  };
  const Case cases[] = {
      {[](TestSpec& s) { s.connections = 0; }, "at least 1"},
      {[](TestSpec& s) { s.connections = 5000; }, "cap of 4096"},
      {[](TestSpec& s) { s.connections = 2100; s.direction = Direction::bidir; }, "twice"},
      {[](TestSpec& s) { s.threads = 1000; }, "-T"},
      {[](TestSpec& s) { s.duration_s = 1e6; }, "-t"},
      {[](TestSpec& s) { s.interval_s = 0.05; }, "-i"},
      {[](TestSpec& s) { s.omit_s = -1; }, "-O"},
      {[](TestSpec& s) { s.buffer = 0; }, "-l must be at least 1 byte"},
      {[](TestSpec& s) { s.buffer = 1ull << 30; }, "-l 1 GiB is above the cap of 256 MiB"},
      {[](TestSpec& s) { s.window = 2ull << 30; }, "-w"},
      {[](TestSpec& s) { s.engine = Engine::threads; s.recv_mode = RecvMode::splice; }, "--engine threads"},
      {[](TestSpec& s) { s.engine = Engine::threads; s.threads = 2; }, "drop -T"},
      {[](TestSpec& s) { s.engine = Engine::threads; s.connections = 200; s.direction = Direction::bidir; },
       "at most 256: 400 need --engine asio or uring"},
      {[](TestSpec& s) { s.hash = util::HashKind::sha1; s.recv_mode = RecvMode::trunc; }, "trunc discards"},
      {[](TestSpec& s) { s.rate_bps = 100; }, "-b must be at least 8k"},
      {[](TestSpec& s) { s.fq_rate_bps = -1; }, "--fq-rate"},
      {[](TestSpec& s) { s.congestion = "BBR!"; }, "-C 'BBR!'"},
      {[](TestSpec& s) { s.cpus = {2000}; }, "-A"},
      {[](TestSpec& s) { s.iface_stats = std::vector<std::string>{"a/b"}; }, "--iface-stats"},
  };
  for (const Case& c : cases) {
    TestSpec spec;
    c.change(spec);
    std::string sentence = broken_rule(spec);
    EXPECT_NE(sentence.find(c.mentions), std::string::npos) << c.mentions << ": " << sentence;
    EXPECT_EQ(sentence.find('\n'), std::string::npos) << sentence;
  }
}

TEST(SpecRules, CapsComeFromTheLimits) {
  Limits tight;
  tight.max_connections = 8;
  tight.max_buffer = 1 << 16;
  TestSpec spec;
  spec.connections = 9;
  EXPECT_NE(broken_rule(spec, tight).find("cap of 8"), std::string::npos);
  spec.connections = 8;
  spec.buffer = 1 << 17;
  EXPECT_NE(broken_rule(spec, tight).find("cap of 64 KiB"), std::string::npos);
}

TEST(SpecShape, TimedOrCountedAndWhatEachSideOpens) {
  TestSpec spec;
  EXPECT_TRUE(spec.timed());
  spec.omit_s = 2;
  EXPECT_DOUBLE_EQ(spec.window_s(), 12);
  spec.duration_s = 0;
  EXPECT_EQ(spec.window_s(), 0);
  spec.connections = 5;
  EXPECT_EQ(spec.data_connections(), 5u);
  spec.direction = Direction::bidir;
  EXPECT_EQ(spec.data_connections(), 10u);
  EXPECT_EQ(worker_threads(Engine::threads, 0, 6), 6u);
  EXPECT_EQ(worker_threads(Engine::asio, 1, 6), 1u);
  EXPECT_LE(effective_threads(0, 1), 1u);
}

TEST(SpecNames, EveryValueHasOneName) {
  for (RecvMode mode : {RecvMode::recv, RecvMode::recv_into, RecvMode::trunc, RecvMode::splice, RecvMode::mmap})
    EXPECT_EQ(recv_mode_from_string(to_string(mode)), mode);
  for (SendMode mode : {SendMode::send, SendMode::zerocopy, SendMode::sendfile})
    EXPECT_EQ(send_mode_from_string(to_string(mode)), mode);
  for (Engine engine : {Engine::asio, Engine::threads, Engine::uring}) EXPECT_EQ(engine_from_string(to_string(engine)), engine);
  for (Direction direction : {Direction::forward, Direction::reverse, Direction::bidir})
    EXPECT_EQ(direction_from_string(to_string(direction)), direction);
  EXPECT_FALSE(recv_mode_from_string("copy"));
}

}  // namespace
}  // namespace testio::spec
