#include "workloads/workload.hpp"

namespace testio::workloads {

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

}  // namespace testio::workloads
