// --transfers: downloads of --size bytes, and where they are saved.
#include "cli/groups.hpp"

#include "util/units.hpp"

namespace testio::cli {

using util::UsageError;

void add_transfers_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("Transfers")
    ("transfers", "Download COUNT transfers of --size bytes from the server, N at a time, each on a fresh "
                  "connection; reports transfers/s, connect and transfer time percentiles",
       cxxopts::value<std::string>(), "COUNT")
    ("size", "Bytes per transfer", cxxopts::value<std::string>(), "SIZE")
    ("reuse", "Keep each of the N connections for its next transfer")
    ("save", "Write each transfer to DIR/transfer-NNNN; an existing file is refused unless --force",
       cxxopts::value<std::string>(), "DIR")
    ("force", "With --save: overwrite existing files");
  // clang-format on
}

void fill_transfers(const cxxopts::ParseResult& args, config::Config& config, GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  if (auto count = typed(args, "transfers")) {
    given.transfers = true;
    spec.workload = "transfers";
    spec.transfers.count = util::parse_count(*count, "--transfers");
  }
  if (auto size = typed(args, "size")) {
    given.size = true;
    spec.transfers.size = util::parse_size(*size, "--size");
  }
  given.reuse = args.count("reuse") > 0;
  if (given.reuse) spec.transfers.reuse = true;
  if (auto dir = typed(args, "save")) {
    given.save = true;
    config.save_dir = *dir;
  }
  config.force = given.force = args.count("force") > 0;
}

void check_transfers(const config::Config& config, const GivenOptions& given) {
  if (!config.spec.is("transfers")) {
    if (given.size || given.reuse || given.save || given.force)
      throw UsageError("--size, --reuse, --save and --force apply to --transfers");
    return;
  }
  if (given.transfers && !given.size) throw UsageError("--transfers needs --size: the bytes each transfer downloads");
  if (given.force && !given.save) throw UsageError("--force applies to --save");
  if (given.time || given.bytes) throw UsageError("--transfers runs until COUNT transfers are done: drop -t and -n");
  if (given.rr || given.raw) throw UsageError("--transfers does not go with --rr or --raw");
  if (given.omit) throw UsageError("-O does not apply to --transfers");
  if (given.recv_mode)
    throw UsageError("--recv-mode applies to bulk tests; --transfers reads into one buffer (or its --save file)");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode)
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (config.cport_first) throw UsageError("--cport does not go with --transfers: each transfer needs a fresh port");
}
}  // namespace testio::cli
