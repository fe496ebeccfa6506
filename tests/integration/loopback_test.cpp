// End-to-end tests of the real binary on loopback. No timing thresholds: only byte counts, exit
// codes and messages are asserted; time limits exist only so a hang fails instead of blocking CI.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <thread>

#include "integration/process.hpp"

namespace testio::testing {
namespace {

using namespace std::chrono_literals;

std::string binary() {
  const char* path = std::getenv("TESTIO_BINARY");
  return path ? path : "./testio";
}

// A server on a kernel-chosen port, killed when the test ends.
class Server {
 public:
  explicit Server(std::vector<std::string> extra = {"-B", "127.0.0.1"}) {
    std::vector<std::string> argv = {binary(), "-s", "-p", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv);
    if (!process_->wait_for_err("listening on", 10s)) {
      ADD_FAILURE() << "server did not start: " << process_->err();
      return;
    }
    std::smatch match;
    std::string err = process_->err();
    if (std::regex_search(err, match, std::regex(R"(listening on \S*:(\d+))"))) port_ = match[1];
  }
  const std::string& port() const { return port_; }
  ChildProcess& process() { return *process_; }

 private:
  std::unique_ptr<ChildProcess> process_;
  std::string port_;
};

std::vector<std::string> client(const Server& server, std::vector<std::string> extra,
                                const std::string& host = "127.0.0.1") {
  std::vector<std::string> argv = {binary(), "-c", host, "-p", server.port()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

struct Sums {
  long long sent = -1, received = -1;
};

Sums sums(const std::string& report) {
  Sums result;
  std::smatch match;
  if (std::regex_search(report, match, std::regex(R"(\[  SUM\] sender\s+(\d+))"))) result.sent = std::stoll(match[1]);
  if (std::regex_search(report, match, std::regex(R"(\[  SUM\] receiver\s+(\d+))"))) result.received = std::stoll(match[1]);
  return result;
}

// Per-connection byte counts of one role, in connection order.
std::vector<long long> per_stream(const std::string& report, const std::string& role) {
  std::vector<long long> bytes;
  std::regex line("\\[\\s*\\d+\\] " + role + "\\s+(\\d+)");
  for (std::sregex_iterator it(report.begin(), report.end(), line), end; it != end; ++it)
    bytes.push_back(std::stoll((*it)[1]));
  return bytes;
}

void expect_equal_counts(const Result& result, std::size_t connections) {
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  Sums total = sums(result.out);
  EXPECT_GT(total.sent, 0) << result.out;
  EXPECT_EQ(total.sent, total.received) << result.out;
  std::vector<long long> sent = per_stream(result.out, "sender");
  std::vector<long long> received = per_stream(result.out, "receiver");
  ASSERT_EQ(sent.size(), connections) << result.out;
  EXPECT_EQ(sent, received);
}

TEST(Loopback, OneConnection) {
  Server server;
  expect_equal_counts(run(client(server, {"1", "-t", "1"})), 1);
}

TEST(Loopback, FourConnections) {
  Server server;
  expect_equal_counts(run(client(server, {"4", "-t", "1"})), 4);
}

TEST(Loopback, ThirtyTwoConnections) {
  Server server;
  expect_equal_counts(run(client(server, {"32", "-t", "1", "-v"})), 32);
}

TEST(Loopback, ServerReportsTheSameCounts) {
  Server server;
  Result result = run(client(server, {"2", "-t", "1"}));
  ASSERT_EQ(result.code, 0) << result.err;
  ASSERT_TRUE(server.process().wait_for_err("finished", 10s)) << server.process().err();
  server.process().signal(SIGTERM);
  ASSERT_TRUE(server.process().wait(10s).has_value());
  Sums client_view = sums(result.out), server_view = sums(server.process().out());
  EXPECT_EQ(client_view.sent, server_view.sent);
  EXPECT_EQ(client_view.received, server_view.received);
}

class RecvModes : public ::testing::TestWithParam<const char*> {};

TEST_P(RecvModes, ByteCountArrivesExactly) {
  Server server;
  Result result = run(client(server, {"3", "-n", "50M", "--recv-mode", GetParam()}));
  expect_equal_counts(result, 3);
  EXPECT_EQ(sums(result.out).received, 50ll << 20);
}
INSTANTIATE_TEST_SUITE_P(EachMode, RecvModes, ::testing::Values("recv", "recv_into", "trunc"));

TEST(Loopback, OddByteCountSplitsExactlyWithSmallBuffers) {
  Server server;
  Result result = run(client(server, {"7", "-n", "10000001", "-l", "4K", "-T", "3", "-v"}));
  expect_equal_counts(result, 7);
  EXPECT_EQ(sums(result.out).received, 10000001);
}

TEST(Loopback, WindowIsAppliedAndReported) {
  Server server;
  Result result = run(client(server, {"2", "-n", "20M", "-w", "256K"}));
  expect_equal_counts(result, 2);
  EXPECT_NE(result.out.find("window 256 KiB"), std::string::npos) << result.out;
}

TEST(Loopback, AClampedWindowIsReportedWithItsSysctl) {
  Server server;
  // Far above Debian's default net.core.rmem_max (208 KiB) and below testio's 1 GiB cap.
  Result result = run(client(server, {"1", "-n", "10M", "-w", "900M"}));
  expect_equal_counts(result, 1);
  bool clamped = result.err.find("clamped") != std::string::npos;
  if (!clamped) GTEST_SKIP() << "this host's rmem_max/wmem_max allow 900 MiB";
  EXPECT_NE(result.err.find("net.core."), std::string::npos) << result.err;
}

TEST(Loopback, IPv6) {
  int probe = socket(AF_INET6, SOCK_STREAM, 0);
  if (probe < 0) GTEST_SKIP() << "no IPv6 on this host";
  close(probe);
  Server server({"-B", "::1"});
  if (server.port().empty()) GTEST_SKIP() << "cannot listen on ::1: " << server.process().err();
  expect_equal_counts(run(client(server, {"2", "-n", "10M"}, "::1")), 2);
}

TEST(Loopback, ABusyServerQueuesASecondClientOrSaysBusyToOneThatWillNotWait) {
  Server server;
  // The first test runs until this test stops it, so the clients below find the server busy
  // however slowly they start: with -t 8 instead, a loaded ASan run once started the queued
  // client after the first test had ended.
  ChildProcess first(client(server, {"2", "-t", "120"}));
  ASSERT_TRUE(server.process().wait_for_err("test #1 from", 10s));
  Result impatient = run(client(server, {"1", "-t", "1", "--max-wait", "0"}));
  EXPECT_EQ(impatient.code, 1);
  EXPECT_NE(impatient.err.find("busy"), std::string::npos) << impatient.err;
  EXPECT_NE(impatient.err.find("--max-wait"), std::string::npos) << impatient.err;
  ChildProcess queued(client(server, {"1", "-t", "1"}));
  EXPECT_TRUE(queued.wait_for_err("waiting for the server: 1 test ahead", 60s)) << queued.err();
  first.signal(SIGINT);  // ends the first test early (exit 1), and the queued one starts
  std::optional<int> first_code = first.wait(30s);
  ASSERT_TRUE(first_code.has_value());
  EXPECT_EQ(*first_code, 1) << first.err();
  std::optional<int> queued_code = queued.wait(60s);
  ASSERT_TRUE(queued_code.has_value());
  EXPECT_EQ(*queued_code, 0) << queued.err();
}

TEST(Loopback, ClientKilledMidTestThenANewTestSucceeds) {
  Server server;
  ChildProcess victim(client(server, {"4", "-t", "20"}));
  ASSERT_TRUE(server.process().wait_for_err("test #1 from", 10s));
  std::this_thread::sleep_for(500ms);
  victim.signal(SIGKILL);
  ASSERT_TRUE(victim.wait(10s).has_value());
  ASSERT_TRUE(server.process().wait_for_err("ended", 20s)) << server.process().err();
  expect_equal_counts(run(client(server, {"2", "-t", "1"})), 2);
}

TEST(Loopback, ServerKilledMidTestEndsTheClientWithAMessage) {
  Server server;
  ChildProcess victim(client(server, {"2", "-t", "20"}));
  ASSERT_TRUE(server.process().wait_for_err("test #1 from", 10s));
  std::this_thread::sleep_for(500ms);
  server.process().signal(SIGKILL);
  std::optional<int> code = victim.wait(30s);
  ASSERT_TRUE(code.has_value()) << "client hung after the server died";
  EXPECT_EQ(*code, 1);
  EXPECT_NE(victim.err().find("error"), std::string::npos) << victim.err();
}

TEST(Loopback, OneOffServerExitsAfterOneTest) {
  Server server({"-B", "127.0.0.1", "-1"});
  expect_equal_counts(run(client(server, {"1", "-t", "1"})), 1);
  std::optional<int> code = server.process().wait(20s);
  ASSERT_TRUE(code.has_value()) << "a -1 server kept running";
  EXPECT_EQ(*code, 0);
}

int connect_raw(const std::string& port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(Loopback, GarbageAndWrongVersionsAreTurnedAwayAndTheServerKeepsServing) {
  Server server;
  int garbage = connect_raw(server.port());
  ASSERT_GE(garbage, 0);
  ASSERT_EQ(write(garbage, "hello there\n", 12), 12);

  // A testio preamble with protocol version 99: the server answers with an error frame.
  int future = connect_raw(server.port());
  ASSERT_GE(future, 0);
  unsigned char preamble[24] = {0x9e, 't', 'i', 'o', 'C', 99};
  ASSERT_EQ(write(future, preamble, sizeof preamble), 24);
  std::string answer;
  char chunk[512];
  for (ssize_t n; (n = read(future, chunk, sizeof chunk)) > 0;) answer.append(chunk, static_cast<std::size_t>(n));
  EXPECT_NE(answer.find("version"), std::string::npos) << answer;
  close(future);

  expect_equal_counts(run(client(server, {"2", "-t", "1"})), 2);
  close(garbage);
  EXPECT_TRUE(server.process().wait_for_err("not a testio client", 10s)) << server.process().err();
}

TEST(Loopback, RefusedPortExitsOne) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::string port = std::to_string(ntohs(address.sin_port));
  close(fd);  // bound but never listened: nothing answers on that port
  Result result = run({binary(), "-c", "127.0.0.1", "-p", port, "-t", "1"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("cannot connect"), std::string::npos) << result.err;
}

TEST(Loopback, UnknownHostExitsOne) {
  Result result = run({binary(), "-c", "no-such-host.invalid", "-t", "1"});
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.err.find("cannot resolve"), std::string::npos) << result.err;
}

TEST(Loopback, BadOptionsExitTwoWithOneSentence) {
  const std::vector<std::vector<std::string>> cases = {
      {binary()}, {binary(), "-c", "127.0.0.1", "0"}, {binary(), "-c", "127.0.0.1", "-l", "2X"},
      {binary(), "-c", "127.0.0.1", "-t", "-3"}, {binary(), "--no-such-option"},
      {binary(), "-c", "127.0.0.1", "5000"}, {binary(), "-c", "127.0.0.1", "--recv-mode", "fast"}};
  for (const auto& argv : cases) {
    Result result = run(argv);
    EXPECT_EQ(result.code, 2) << argv.back();
    EXPECT_EQ(result.out, "");
    ASSERT_FALSE(result.err.empty());
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  }
}

TEST(Loopback, HelpExitsZero) {
  Result result = run({binary(), "--help"});
  EXPECT_EQ(result.code, 0);
  EXPECT_NE(result.out.find("--recv-mode"), std::string::npos);
}

}  // namespace
}  // namespace testio::testing
