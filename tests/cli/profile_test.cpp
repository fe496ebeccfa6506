#include "cli/profile.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "util/units.hpp"

namespace testio::cli {
namespace {

class ProfileFile : public ::testing::Test {
 protected:
  void write(const std::string& text) { std::ofstream(path_) << text; }
  void TearDown() override { std::remove(path_.c_str()); }
  Profile read(const std::string& given = "") {
    return read_profile(path_, [](const std::string& key) { return key != "help"; },
                        [&](const std::string& key) { return key == given; });
  }
  std::vector<std::string> tokens(const std::string& given = "") { return read(given).tokens; }
  std::string path_ = ::testing::TempDir() + "testio-profile-test.json";
};

TEST_F(ProfileFile, EntriesBecomeLongOptions) {
  write(R"({"parallel": 32, "buffer": "2M", "time": 30, "interval": 0.5, "verbose": true, "json": false})");
  std::vector<std::string> expected = {"--buffer=2M", "--interval=0.5", "--parallel=32", "--time=30", "--verbose"};
  std::vector<std::string> got = tokens();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST_F(ProfileFile, CommandLineWins) {
  write(R"({"parallel": 32, "time": 30})");
  EXPECT_EQ(tokens("time"), (std::vector<std::string>{"--parallel=32"}));
}

TEST_F(ProfileFile, ErrorsNameTheKeyOrTheFile) {
  auto message = [&](const std::string& text) {
    write(text);
    try {
      tokens();
    } catch (const util::UsageError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_NE(message(R"({"help": true})").find("\"help\""), std::string::npos);
  EXPECT_NE(message(R"({"time": [1]})").find("\"time\""), std::string::npos);
  EXPECT_NE(message(R"({"time": null})").find("\"time\""), std::string::npos);
  EXPECT_NE(message("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(message("{").find("not a JSON object"), std::string::npos);
  std::remove(path_.c_str());
  EXPECT_THROW(tokens(), util::UsageError);
}

// A profile may carry a test spec in the spec's own JSON mapping, beside option names.
TEST_F(ProfileFile, ASpecIsTheTestTheCommandLineChanges) {
  write(R"({"spec": {"connections": 12, "engine": "threads"}, "verbose": true})");
  Profile profile = read();
  ASSERT_TRUE(profile.spec);
  EXPECT_EQ(profile.spec->connections, 12u);
  EXPECT_EQ(profile.spec->engine, spec::Engine::threads);
  EXPECT_EQ(profile.spec->buffer, spec::kDefaultBuffer);
  EXPECT_FALSE(profile.names_buffer);
  EXPECT_EQ(profile.tokens, (std::vector<std::string>{"--verbose"}));
  write(R"({"spec": {"connections": "many"}})");
  EXPECT_THROW(read(), util::UsageError);
}

// A spec that counts its test and names no window has none.
TEST_F(ProfileFile, ACountedSpecHasNoWindow) {
  write(R"({"spec": {"total_bytes": 1000000}})");
  EXPECT_EQ(read().spec->duration_s, 0);
  write(R"({"spec": {"workload": "rr", "settings": {"messages": 100}}})");
  EXPECT_EQ(read().spec->duration_s, 0);
  // As a spec said its workload's settings before they were one object (protocol 2's reports).
  write(R"({"spec": {"workload": "rr", "messages": 100, "transfers": 0}})");
  Profile flat = read();
  EXPECT_EQ(flat.spec->duration_s, 0);
  EXPECT_EQ(flat.spec->settings.size(), 1u);
  write(R"({"spec": {"total_bytes": 1000000, "duration_s": 5}})");
  EXPECT_EQ(read().spec->duration_s, 5);
}

// A JSON report is a profile of the test it ran: its start.testio.spec, and nothing else.
TEST_F(ProfileFile, AReportRunsItsTestAgain) {
  write(R"({"start": {"testio": {"spec": {"connections": 3, "buffer": 4096, "workload": "rr"}}},
            "intervals": [], "end": {}})");
  Profile profile = read();
  ASSERT_TRUE(profile.spec);
  EXPECT_EQ(profile.spec->connections, 3u);
  EXPECT_TRUE(profile.spec->is("rr"));
  EXPECT_TRUE(profile.names_buffer);
  EXPECT_TRUE(profile.tokens.empty());
  write(R"({"start": {}, "end": {}})");
  EXPECT_THROW(read(), util::UsageError);
}

}  // namespace
}  // namespace testio::cli
