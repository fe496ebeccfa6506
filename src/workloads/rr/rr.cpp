// Request/response's options and rules: --rr and what it sends, the limits a test of it keeps,
// and which side each peer runs (the sides themselves are in rr_streams.cpp).
#include "workloads/rr/rr.hpp"

#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/part.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rr {

using util::UsageError;

// What ends a request/response test (empty: -t), in the report's words.
std::string rr_extent(const RrSpec& rr) {
  return rr.messages ? std::to_string(rr.messages) + " messages per connection" : "";
}

void add_options(options::OptionTable& table) {
  // clang-format off
  table.add_options("Request/response")
    ("rr", "Request/response: each connection sends --msize bytes, waits for the echo, repeats; "
           "reports messages/s and latency percentiles")
    ("msize", "Bytes per request (and per echo)", options::value().default_value("1K"), "SIZE")
    ("num", "Requests per connection (instead of -t)", options::value(), "COUNT")
    ("depth", "Requests outstanding per connection", options::value().default_value("1"), "K");
  // clang-format on
}

void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  given.rr = args.count("rr") > 0;
  if (given.rr) spec.workload = "rr";
  given.rr_options = args.count("msize") || args.count("num") || args.count("depth");
  given.num = args.count("num") > 0;
  if (!spec.is("rr") && !given.rr_options) return;  // (typed without --rr: check_options says so)
  RrSpec rr = part_of<RrSpec>(spec);
  if (auto size = options::typed(args, "msize")) rr.message_size = util::parse_size(*size, "--msize");
  if (auto count = options::typed(args, "num")) rr.messages = util::parse_count(*count, "--num");
  // A profile's count gives way to -t typed here (one typed beside -t is refused as such).
  if (!given.num && args.count("time")) rr.messages = 0;
  if (auto depth = options::typed(args, "depth")) rr.depth = options::parse_u32(*depth, "--depth");
  set_part(spec, rr);
}

// --rr: what was typed for it, and what was typed that does not go with it.
void check_options(const config::Config& config, const options::GivenOptions& given) {
  if (!config.spec.is("rr")) {
    if (given.rr_options) throw UsageError("--msize, --num and --depth apply to --rr tests");
    return;
  }
  const RrSpec rr = part_of<RrSpec>(config.spec);
  if (given.num && rr.messages == 0) throw UsageError("--num must be at least 1");
  // (A server takes such a request, which older clients sent for --num: only the client counts.)
  if (!config.spec.timed() && rr.messages == 0)
    throw UsageError("an rr test needs -t seconds or --num messages");
  if (given.num && given.time) throw UsageError("--num and -t exclude each other: count messages or time them");
  if (given.bytes) throw UsageError("-n counts bytes of a bulk test; --rr counts messages with --num");
  if (given.buffer || given.recv_mode) throw UsageError("-l and --recv-mode apply to bulk tests; --rr sends --msize");
  if (given.file) throw UsageError("-F sends a file; it does not go with --rr");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode)
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
}

namespace {

constexpr std::uint32_t kMaxDepth = 1u << 16;

[[noreturn]] void refuse_rr(const std::string& sentence) { throw spec::SpecError(sentence); }

class Rr final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    const RrSpec rr = part_of<RrSpec>(spec);
    const std::uint64_t size = rr.message_size;
    if (size == 0) refuse_rr("--msize must be at least 1 byte");
    if (size > limits.max_buffer)
      refuse_rr("--msize " + util::format_size(size) + " is above the cap of " + util::format_size(limits.max_buffer));
    if (rr.depth < 1 || rr.depth > kMaxDepth) refuse_rr("--depth must be between 1 and 65536");
    if (rr.messages && spec.timed()) refuse_rr("--num and -t exclude each other: count messages or time them");
    if (spec.total_bytes) refuse_rr("-n counts bytes of a bulk test; --rr counts messages with --num");
    check_no_bulk_options(spec);
  }
  std::string extent(const spec::TestSpec& spec) const override { return rr_extent(part_of<RrSpec>(spec)); }
  bool takes_setting(std::string_view name) const override { return part_has<RrSpec>(name); }
  bool answered() const override { return true; }

  std::unique_ptr<TestSide> client(const config::Config&, spec::TestSpec& spec) const override {
    return client_side(spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources&) const override {
    return echo_side(spec);
  }
};

}  // namespace

const Workload& workload() {
  static const Rr rr;
  return rr;
}

}  // namespace testio::workloads::rr
