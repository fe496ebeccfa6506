// What every workload shares: the defaults of a TestSide, the direction layout, and the checks
// several workloads make.
#include "workloads/workload.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>

#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace testio::workloads {

std::string no_udp_port_refusal() {
  return "this server could not open the UDP port of its number when it started (another program's socket held "
         "it), so it takes no test that sends UDP; restart it, or start it on another port with -p";
}

// Which connections carry which direction (workloads/layout.hpp).
DirectionLayout DirectionLayout::of(spec::Direction direction, std::uint32_t connections) noexcept {
  switch (direction) {
    case spec::Direction::reverse: return {0, connections};
    case spec::Direction::bidir: return {connections, connections};
    case spec::Direction::forward: break;
  }
  return {connections, 0};
}

std::vector<std::uint32_t> DirectionLayout::connections(bool forward_direction) const {
  std::vector<std::uint32_t> list;
  const std::uint32_t first = forward_direction ? 0 : forward;
  for (std::uint32_t i = 0; i < count(forward_direction); ++i) list.push_back(first + i);
  return list;
}


std::string TestSide::route(std::uint32_t, asio::ip::tcp::socket, engines::Worker&) {
  return "the test takes no connections once it has started";
}

std::string TestSide::route_flow(std::uint32_t, asio::ip::udp::socket, engines::Worker&) {
  return "the test takes no UDP flows";
}

void TestSide::describe_start(report::StartInfo&) const {}

void TestSide::add_to_report(report::TestReport&) const {}

std::string TestSide::failure(const report::TestReport&) const { return {}; }

void check_no_bulk_options(const spec::TestSpec& spec) {
  auto refuse = [](const char* sentence) { throw spec::SpecError(sentence); };
  if (spec.direction != spec::Direction::forward)
    refuse("-R and --bidir apply to bulk tests; --rr, --transfers and --raw have their own directions");
  if (spec.engine != spec::Engine::asio)
    refuse("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (spec.send_mode != spec::SendMode::send)
    refuse("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (spec.rate_bps > 0 || spec.fq_rate_bps > 0)
    refuse("-b, --total-rate and --fq-rate pace bulk tests; --rr and --transfers run closed loops");
  if (!spec.marks_follow_rate)
    refuse("--no-lowat applies to bulk tests; --rr, --transfers and --raw leave the marks to the kernel");
  if (spec.hash != util::HashKind::none) refuse("-F sends a file; it does not go with --rr or --transfers");
}

void check_download_count(const spec::TestSpec& spec, const spec::Limits& limits) {
  auto refuse = [](const std::string& sentence) { throw spec::SpecError(sentence); };
  const std::uint64_t count = part_of<transfers::TransfersSpec>(spec).count;
  if (count == 0) refuse("--transfers must be at least 1");
  if (count > limits.max_transfers)
    refuse("--transfers " + std::to_string(count) + " is above the cap of " + std::to_string(limits.max_transfers));
  if (spec.timed() || spec.total_bytes) refuse("--transfers runs until COUNT transfers are done: drop -t and -n");
  if (spec.omit_s > 0) refuse("-O does not apply to --transfers");
  check_no_bulk_options(spec);
}

void check_writable_directory(const std::string& dir, const std::string& option) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) throw std::runtime_error(option + " " + dir + " is not a directory");
  // access(2) says yes to root everywhere; creating a file is the only honest test.
  const std::string probe = dir + "/.testio-probe-" + std::to_string(::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write to " + option + " " + dir + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace testio::workloads
