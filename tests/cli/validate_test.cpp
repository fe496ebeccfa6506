#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"
#include "workloads/udp/udp.hpp"

namespace testio::cli {
namespace {

ParsedCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "testio");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string usage_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const util::UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(Options, UdpTakesIperf3sDefaultsAndItsOwnRules) {
  config::Config config = parse({"-c", "host", "-u"}).config;
  EXPECT_EQ(config.spec.workload, "udp");
  EXPECT_EQ(config.spec.buffer, workloads::udp::kDefaultDatagram);
  EXPECT_DOUBLE_EQ(config.spec.rate_bps, workloads::udp::kDefaultUdpRate);
  workloads::udp::UdpSpec udp = workloads::part_of<workloads::udp::UdpSpec>(config.spec);
  EXPECT_TRUE(udp.gso && udp.gro && udp.connected);
  config = parse({"-c", "host", "-u", "-b", "0", "-l", "9000", "--no-gso", "--batch", "4", "--no-connect"}).config;
  EXPECT_DOUBLE_EQ(config.spec.rate_bps, 0);
  EXPECT_EQ(config.spec.buffer, 9000u);
  udp = workloads::part_of<workloads::udp::UdpSpec>(config.spec);
  EXPECT_FALSE(udp.gso);
  EXPECT_EQ(udp.batch, 4u);
  EXPECT_FALSE(udp.connected);
  EXPECT_NE(usage_error({"-c", "10.0.0.1", "-u", "-l", "65508"}).find("over IPv4"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "::1", "-u", "-l", "65528"}).find("65527 over IPv6"), std::string::npos);
  EXPECT_EQ(usage_error({"-c", "::1", "-u", "-l", "65527"}), "");
  EXPECT_NE(usage_error({"-c", "host", "-u", "-l", "31"}).find("at least 32"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "host", "--batch", "8"}).find("apply to -u tests"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "host", "-u", "--batch", "1025"}).find("1 to 1024"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "host", "-u", "--recv-mode", "trunc"}).find("TCP streams"), std::string::npos);
  EXPECT_NE(usage_error({"-s", "-u"}).find("client option"), std::string::npos);
}

TEST(Options, ClientDefaults) {
  config::Config config = parse({"-c", "host"}).config;
  EXPECT_EQ(config.role, config::Role::client);
  EXPECT_EQ(config.host, "host");
  EXPECT_EQ(config.spec.connections, 1u);
  EXPECT_EQ(config.spec.duration_s, 10.0);
  EXPECT_EQ(config.spec.buffer, 2u << 20);
  EXPECT_EQ(config.port, 5201);
  EXPECT_EQ(config.spec.recv_mode, spec::RecvMode::recv_into);
}

TEST(Options, PositionalAndParallelConnectionCounts) {
  EXPECT_EQ(parse({"-c", "host", "32"}).config.spec.connections, 32u);
  EXPECT_EQ(parse({"-c", "host", "-P", "8"}).config.spec.connections, 8u);
  EXPECT_EQ(parse({"-c", "host", "8", "-P", "8"}).config.spec.connections, 8u);
  EXPECT_NE(usage_error({"-c", "host", "8", "-P", "4"}), "");
}

TEST(Options, SizesTimesAndModes) {
  config::Config config =
      parse({"-c", "h", "-l", "512K", "-w", "4M", "-t", "2.5", "-T", "3", "--recv-mode", "trunc"}).config;
  EXPECT_EQ(config.spec.buffer, 512u * 1024);
  EXPECT_EQ(config.spec.window, 4u << 20);
  EXPECT_EQ(config.spec.duration_s, 2.5);
  EXPECT_EQ(config.spec.threads, 3u);
  EXPECT_EQ(config.spec.recv_mode, spec::RecvMode::trunc);
  EXPECT_EQ(parse({"-c", "h", "-n", "1G"}).config.spec.total_bytes, 1ull << 30);
}

TEST(Options, ServerOptions) {
  config::Config config = parse({"-s", "-p", "6000", "-1", "-B", "::1"}).config;
  EXPECT_EQ(config.role, config::Role::server);
  EXPECT_EQ(config.port, 6000);
  EXPECT_TRUE(config.one_off);
  EXPECT_EQ(config.bind_address, "::1");
}

TEST(Options, HelpAndVersion) {
  ParsedCommandLine help = parse({"--help"});
  EXPECT_EQ(help.action, ParsedCommandLine::Action::help);
  for (const char* option : {"--recv-mode", "--buffer", "--window", "--one-off", "--threads"})
    EXPECT_NE(help.help_text.find(option), std::string::npos) << option;
  // Every group a workload adds is shown: --latency and --rpm were once left out of --help.
  for (const char* option : {"--latency", "--rpm", "--rr", "--transfers", "--mesh", "--udp"})
    EXPECT_NE(help.help_text.find(option), std::string::npos) << option;
  EXPECT_EQ(help.help_text.find("--bash-completion"), std::string::npos);
  EXPECT_EQ(parse({"--version"}).action, ParsedCommandLine::Action::version);
  EXPECT_EQ(parse({"-c", "h", "--dry-run"}).action, ParsedCommandLine::Action::check);
  EXPECT_THROW(parse({"-c", "h", "-P", "0", "--dry-run"}), util::UsageError);
}

// Each bad input gets a sentence naming what is wrong.
TEST(Options, TransfersAndFileSends) {
  config::Config config =
      parse({"-c", "h", "100", "--transfers", "1000", "--size", "6M", "--reuse", "--save", "d", "--force"}).config;
  EXPECT_EQ(config.spec.connections, 100u);
  const auto transfers = workloads::part_of<workloads::transfers::TransfersSpec>(config.spec);
  EXPECT_EQ(transfers.count, 1000u);
  EXPECT_EQ(transfers.size, 6u << 20);
  EXPECT_TRUE(transfers.reuse && config.force);
  EXPECT_EQ(config.save_dir, "d");
  config = parse({"-c", "h", "4", "-F", "file", "--hash", "sha256"}).config;
  EXPECT_EQ(config.file, "file");
  EXPECT_EQ(config.spec.hash, util::HashKind::sha256);
  EXPECT_EQ(parse({"-s", "-F", "file"}).config.file, "file");
}

TEST(Validate, RejectsBadInputWithOneSentence) {
  struct Case {
    std::vector<std::string> args;
    const char* mentions;
  };
  const Case cases[] = {
      {{}, "-s"},
      {{"-s", "-c", "h"}, "exclude"},
      {{"-c", "h", "0"}, "at least 1"},
      {{"-c", "h", "100000"}, "cap"},
      {{"-c", "h", "-l", "2X"}, "not a size"},
      {{"-c", "h", "-l", "0"}, "at least 1 byte"},
      {{"-c", "h", "-l", "1G"}, "cap"},
      {{"-c", "h", "-t", "-1"}, "negative"},
      {{"-c", "h", "-t", "0"}, "more than 0"},
      {{"-c", "h", "-t", "1e9"}, "cap"},
      {{"-c", "h", "-n", "0"}, "more than 0"},
      {{"-c", "h", "-n", "1M", "-t", "3"}, "exclude"},
      {{"-c", "h", "-T", "0"}, "at least 1"},
      {{"-c", "h", "--recv-mode", "copy"}, "recv_into"},
      {{"-c", "h", "-F", "f", "--recv-mode", "splice"}, "splice discards"},
      {{"-c", "h", "--engine", "threads", "-T", "2"}, "drop -T"},
      {{"-c", "h", "--engine", "uring", "--send-mode", "sendfile"}, "send or zerocopy"},
      {{"-c", "h", "--engine", "threads", "--recv-mode", "splice"}, "recv, recv_into or trunc"},
      {{"-c", "h", "-4", "-6"}, "exclude"},
      {{"-c", "h", "-p", "70000"}, "65535"},
      {{"-c", "h", "-1"}, "server option"},
      {{"-s", "-t", "5"}, "client option"},
      {{"-s", "4"}, "client option"},
      {{"--bogus"}, "bogus"},
      {{"-c", "h", "1", "2"}, "unexpected"},
      {{"-c", "h", "--transfers", "5"}, "--size"},
      {{"-c", "h", "--transfers", "5", "--size", "0"}, "at least 1 byte"},
      {{"-c", "h", "--transfers", "5", "--size", "1K", "--rr"}, "--rr"},
      {{"-c", "h", "--transfers", "5", "--size", "1K", "-n", "1M"}, "drop -t and -n"},
      {{"-c", "h", "--transfers", "5", "--size", "1K", "--recv-mode", "recv"}, "--recv-mode"},
      {{"-c", "h", "--reuse"}, "--transfers"},
      {{"-c", "h", "--transfers", "5", "--size", "1K", "--force"}, "--save"},
      {{"-s", "--save", "d"}, "client option"},
      {{"-s", "--raw", "-F", "f"}, "raw sink"},
      {{"-s", "--hash", "sha256"}, "--raw"},
      {{"-c", "h", "-F", "f", "--transfers", "2", "--size", "1"}, "-F"},
      {{"-c", "h", "-F", "f", "-O", "1"}, "-O"},
      {{"-c", "h", "-R", "--bidir"}, "exclude"},
      {{"-c", "h", "-R", "--rr"}, "bulk tests"},
      {{"-c", "h", "--bidir", "-F", "f"}, "-F"},
      {{"-s", "--bidir"}, "client option"},
      {{"-c", "h", "--bidir", "2049"}, "twice"},
      {{"-c", "h", "--engine", "fast"}, "asio, threads, uring"},
      {{"-c", "h", "--engine", "asio", "--rr"}, "bulk tests"},
      {{"-s", "--engine", "asio"}, "client option"},
      {{"-s", "-t", "0"}, "client option"},
      {{"-c", "h", "300", "--engine", "threads"}, "--engine threads runs a thread per data connection"},
  };
  for (const Case& c : cases) {
    std::string message = usage_error(c.args);
    std::string joined;
    for (const auto& arg : c.args) joined += arg + " ";
    EXPECT_NE(message.find(c.mentions), std::string::npos)
        << "args: " << joined << "\nmessage: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// -F to a testio server is counted by the file: its rules see that test, not a timed one.
TEST(Options, AFileSendIsCountedByItsSize) {
  const std::string path = ::testing::TempDir() + "testio-validate-file";
  std::ofstream(path) << std::string(5000, 'x');
  config::Config config = parse({"-c", "h", "-F", path, "--max-duration", "5"}).config;
  EXPECT_EQ(config.spec.total_bytes, 5000u);
  EXPECT_EQ(config.spec.duration_s, 0);
  std::remove(path.c_str());
}

TEST(Options, IfaceStatsTakesAListOrTheRoutesInterface) {
  config::Config config = parse({"-c", "host", "--iface-stats"}).config;
  ASSERT_TRUE(config.spec.iface_stats);
  EXPECT_TRUE(config.spec.iface_stats->empty());
  config = parse({"-c", "host", "--iface-stats=lo,lo"}).config;
  EXPECT_EQ(config.spec.iface_stats, (std::vector<std::string>{"lo", "lo"}));
  EXPECT_FALSE(parse({"-c", "host"}).config.spec.iface_stats);
}

TEST(Validate, IfaceStatsNamesInterfacesThatExist) {
  EXPECT_EQ(usage_error({"-c", "host", "--iface-stats=nosuchdev0"}),
            "--iface-stats: there is no network interface 'nosuchdev0' here (see ip link)");
  EXPECT_NE(usage_error({"-c", "host", "--iface-stats=lo,,lo"}).find("separated by commas"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "host", "--iface-stats=../lo"}).find("separated by commas"), std::string::npos);
  EXPECT_NE(usage_error({"-s", "--iface-stats"}).find("client option"), std::string::npos);
  EXPECT_EQ(usage_error({"-c", "host", "--iface-stats", "eth0"}),
            "--iface-stats takes its interfaces after '=': --iface-stats=eth0");
  EXPECT_EQ(parse({"-c", "host", "--iface-stats", "4"}).config.spec.connections, 4u);
  EXPECT_NE(usage_error({"-c", "host", "--raw", "--iface-stats"}).find("not --raw"), std::string::npos);
}

}  // namespace
}  // namespace testio::cli
