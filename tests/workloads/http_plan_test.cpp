// The HTTP workload's URLs and file names: which URLs are refused and why, {i}, the names --save
// gives each transfer, and the refusal of a file in the way.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"

namespace testio::workloads::http {
namespace {

TEST(HttpUrl, RefusesWhatCannotBeDownloaded) {
  EXPECT_EQ(url_problem("http://127.0.0.1:8080/files/{i}.bin"), "");
  EXPECT_EQ(url_problem("https://[::1]/x"), "");
  EXPECT_NE(url_problem("http://[::1/x").find("does not parse as a URL"), std::string::npos);
  EXPECT_NE(url_problem("ftp://host/x").find("not ftp://"), std::string::npos);
  EXPECT_NE(url_problem("file:///etc/passwd").find("not file://"), std::string::npos);
  EXPECT_NE(url_problem("no scheme at all").find("does not parse"), std::string::npos);
}

TEST(HttpUrl, FileNameIsThePathsLastSegment) {
  EXPECT_EQ(file_name_of("http://h/a/b/c.pdf?version=2"), "c.pdf");
  EXPECT_EQ(file_name_of("http://h/"), "");
  EXPECT_EQ(file_name_of("http://h"), "");
  EXPECT_EQ(file_name_of("http://h/a/.."), "");
}

config::Config http_config(std::vector<std::string> urls, std::uint64_t count, const std::string& save = {}) {
  config::Config config;
  config.urls = std::move(urls);
  config.spec.workload = "http";
  set_part(config.spec, transfers::TransfersSpec{count, 0, false});
  config.save_dir = save;
  return config;
}

TEST(HttpPlan, NumbersTransfersFromOneAndCyclesAList) {
  auto numbered = make_http_plan(http_config({"http://h/{i}/x{i}.bin"}, 3));
  EXPECT_EQ(numbered->url_for(0), "http://h/1/x1.bin");
  EXPECT_EQ(numbered->url_for(2), "http://h/3/x3.bin");
  auto listed = make_http_plan(http_config({"http://h/a", "http://h/b"}, 5));
  EXPECT_EQ(listed->url_for(3), "http://h/b");
  EXPECT_EQ(listed->url_for(4), "http://h/a");
}

class SaveDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("testio-http-plan-" + std::to_string(::getpid()));
    std::filesystem::create_directory(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SaveDirectory, NamesRepeatsByTransferNumber) {
  auto plan = make_http_plan(http_config({"http://h/same.bin", "http://h/other.bin", "http://h/same.bin", "http://h/"}, 4,
                                         dir_.string()));
  EXPECT_EQ(plan->file_names, (std::vector<std::string>{"transfer-1", "other.bin", "transfer-3", "transfer-4"}));
}

TEST_F(SaveDirectory, RefusesAFileInTheWayUnlessForced) {
  std::ofstream(dir_ / "2.bin") << "old";
  config::Config config = http_config({"http://h/{i}.bin"}, 3, dir_.string());
  try {
    make_http_plan(config);
    FAIL() << "a file in the way was not refused";
  } catch (const std::runtime_error& refused) {
    EXPECT_NE(std::string(refused.what()).find("2.bin would be overwritten; --force allows it"), std::string::npos)
        << refused.what();
  }
  config.force = true;
  EXPECT_NO_THROW(make_http_plan(config));
}

}  // namespace
}  // namespace testio::workloads::http
