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
  std::vector<std::string> tokens(const std::string& given = "") {
    return profile_tokens(path_, [](const std::string& key) { return key != "help"; },
                          [&](const std::string& key) { return key == given; });
  }
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

}  // namespace
}  // namespace testio::cli
