#include "metrics/http_request.hpp"

#include <gtest/gtest.h>

namespace testio::metrics {
namespace {

using Status = ParsedHead::Status;

TEST(HttpRequest, ReadsTheRequestLineTheQueryAndTheScrapeTimeout) {
  ParsedHead head = parse_request_head(
      "GET /probe?target=%5B%3A%3A1%5D%3A5201&time=2.5&note=a+b HTTP/1.1\r\nHost: x\r\n"
      "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\ntrailing");
  ASSERT_EQ(head.status, Status::complete) << head.problem;
  EXPECT_EQ(head.request.method, "GET");
  EXPECT_EQ(head.request.path, "/probe");
  ASSERT_NE(head.request.parameter("target"), nullptr);
  EXPECT_EQ(*head.request.parameter("target"), "[::1]:5201");
  EXPECT_EQ(*head.request.parameter("note"), "a b");
  EXPECT_EQ(head.request.parameter("absent"), nullptr);
  EXPECT_EQ(head.request.scrape_timeout_s, 10.0);
  EXPECT_EQ(head.size, std::string_view("GET /probe?target=%5B%3A%3A1%5D%3A5201&time=2.5&note=a+b HTTP/1.1\r\nHost: "
                                        "x\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n").size());
}

TEST(HttpRequest, WaitsForTheBlankLine) {
  EXPECT_EQ(parse_request_head("GET /metrics HTTP/1.1\r\nHost: x\r\n").status, Status::incomplete);
  EXPECT_EQ(parse_request_head("").status, Status::incomplete);
}

TEST(HttpRequest, RefusesWhatIsNotHttp1) {
  for (const char* head : {"GET /metrics\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n", "G@T /metrics HTTP/1.1\r\n\r\n",
                           "GET metrics HTTP/1.1\r\n\r\n", "GET /a%zz HTTP/1.1\r\n\r\n", "GET /a%00 HTTP/1.1\r\n\r\n",
                           "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", "GET /m HTTP/1.1\r\nA: b\nc\r\n\r\n",
                           "GET /probe?=x HTTP/1.1\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "GET /a\tb HTTP/1.1\r\n\r\n",
                           "GET /m HTTP/1.1\r\nX-Prometheus-Scrape-Timeout-Seconds: -3\r\n\r\n"}) {
    ParsedHead parsed = parse_request_head(head);
    EXPECT_EQ(parsed.status, Status::bad) << head;
    EXPECT_FALSE(parsed.problem.empty()) << head;
  }
}

TEST(HttpRequest, RefusesAHeadBeyondItsCap) {
  std::string endless = "GET /metrics HTTP/1.1\r\nX: " + std::string(100, 'a');
  EXPECT_EQ(parse_request_head(endless, 64).status, Status::bad);
  EXPECT_EQ(parse_request_head(endless + "\r\n\r\n", 64).status, Status::bad);
  EXPECT_EQ(parse_request_head(endless + "\r\n\r\n", 4096).status, Status::complete);
}

TEST(HttpRequest, PercentDecoding) {
  EXPECT_EQ(percent_decode("a%20b+c", true), "a b c");
  EXPECT_EQ(percent_decode("a%20b+c", false), "a b+c");
  EXPECT_EQ(percent_decode("%4", true), std::nullopt);
  EXPECT_EQ(percent_decode("%", true), std::nullopt);
}

}  // namespace
}  // namespace testio::metrics
