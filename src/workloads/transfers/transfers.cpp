// --transfers' options and rules: downloads from a testio server (of --size bytes) or from any
// HTTP server (-c URL, --urls FILE), where they are saved, the limits a test of them keeps, and
// which side each peer runs (the sides themselves are in transfer_streams.cpp).
#include "workloads/transfers/transfers.hpp"

#include <fstream>

#include "options/parsing.hpp"
#include "util/units.hpp"
#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::transfers {

// What ends a test of transfers, in the report's words.
std::string transfers_extent(const spec::TestSpec& spec) {
  const TransfersSpec transfers = part_of<TransfersSpec>(spec);
  return std::to_string(transfers.count) + " transfers of " + util::format_size(transfers.size) +
         " from the server on " + (transfers.reuse ? "kept" : "fresh") + " connections";
}

namespace {

using util::UsageError;

bool is_url(const std::string& host) { return host.find("://") != std::string::npos; }

// --urls FILE: one URL per line; blank lines and lines starting with # are skipped.
std::vector<std::string> read_urls(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError("--urls " + path + " cannot be read");
  std::vector<std::string> urls;
  std::string line;
  for (std::size_t number = 1; std::getline(file, line); ++number) {
    const std::size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string url = line.substr(start, line.find_last_not_of(" \t\r") + 1 - start);
    if (std::string problem = http::url_problem(url); !problem.empty())
      throw UsageError("--urls " + path + " line " + std::to_string(number) + ": " + problem);
    urls.push_back(url);
  }
  if (urls.empty()) throw UsageError("--urls " + path + " holds no URL");
  return urls;
}

void fill_http(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  given.urls = args.count("urls") > 0;
  if (given.urls) {
    config.urls = read_urls(args.value("urls"));
  } else if (is_url(config.host)) {
    if (std::string problem = http::url_problem(config.host); !problem.empty()) throw UsageError(problem);
    config.urls = {config.host};
  }
  config.follow_redirects = args.count("location") > 0;
  config.insecure = args.count("insecure") > 0;
  given.http_options = config.follow_redirects || config.insecure || args.count("max-time");
  if (auto seconds = options::typed(args, "max-time")) {
    config.max_time_s = util::parse_seconds(*seconds, "--max-time");
    if (config.max_time_s < 0.001) throw UsageError("--max-time must be at least 1 ms");
  }
  if (!config.urls.empty()) config.spec.workload = "http";
}

}  // namespace

void add_options(options::OptionTable& table) {
  // clang-format off
  table.add_options("Transfers")
    ("transfers", "Download COUNT transfers N at a time, each on a fresh connection: of --size bytes from a "
                  "testio server, or from the URL given to -c (http:// or https://; {i} in it stands for the "
                  "transfer number 1..COUNT); reports transfers/s, connect and transfer time percentiles",
       options::value(), "COUNT")
    ("size", "Bytes per transfer from a testio server", options::value(), "SIZE")
    ("reuse", "Keep each of the N connections for its next transfer (HTTP keep-alive)")
    ("save", "Write each transfer under DIR (an HTTP body under its URL's file name, else DIR/transfer-NNNN); "
             "an existing file is refused unless --force",
       options::value(), "DIR")
    ("force", "With --save: overwrite existing files")
    ("urls", "Download the URLs in FILE (one per line), in turn; --transfers defaults to their number",
       options::value(), "FILE")
    ("location", "HTTP: follow redirects (at most 10); without it a 3xx answer is a failed transfer")
    ("insecure", "https: accept any certificate (a self-signed test server)")
    ("max-time", "HTTP: the most one transfer may take, connecting included (default 60)",
       options::value(), "SECONDS");
  // clang-format on
}

void fill_options(const options::ParsedOptions& args, config::Config& config, options::GivenOptions& given) {
  spec::TestSpec& spec = config.spec;
  TransfersSpec transfers = part_of<TransfersSpec>(spec);
  if (auto count = options::typed(args, "transfers")) {
    given.transfers = true;
    spec.workload = "transfers";
    transfers.count = util::parse_count(*count, "--transfers");
  }
  if (auto size = options::typed(args, "size")) {
    given.size = true;
    transfers.size = util::parse_size(*size, "--size");
  }
  given.reuse = args.count("reuse") > 0;
  if (given.reuse) transfers.reuse = true;
  if (auto dir = options::typed(args, "save")) {
    given.save = true;
    config.save_dir = *dir;
  }
  config.force = given.force = args.count("force") > 0;
  fill_http(args, config, given);
  // A URL alone is one download; a list, each of its URLs once.
  if (spec.is("http") && !given.transfers) transfers.count = given.urls ? config.urls.size() : 1;
  // Its settings go with its tests (typed without --transfers: check_options says so).
  if (spec.is("transfers") || spec.is("http") || given.size || given.reuse) set_part(spec, transfers);
}

void check_options(const config::Config& config, const options::GivenOptions& given) {
  const bool http = config.spec.is("http");
  // A URL is an HTTP server's: it takes downloads, or --rpm's load and probes.
  if (!config.urls.empty() && !http && !given.rpm)
    throw UsageError("-u does not go with a URL: HTTP downloads run over TCP");
  if (!config.spec.is("transfers") && !http) {
    if (given.size || given.reuse || given.save || given.force)
      throw UsageError("--size, --reuse, --save and --force apply to --transfers");
    if (given.http_options && !given.rpm)
      throw UsageError("--location, --insecure and --max-time apply to HTTP downloads (-c URL)");
    return;
  }
  if (http && config.urls.empty()) throw UsageError("an HTTP download test needs -c URL or --urls FILE");
  if (http && given.size) throw UsageError("--size is for a testio server; an HTTP server decides each body's size");
  if (!http && given.http_options) throw UsageError("--location, --insecure and --max-time apply to HTTP downloads (-c URL)");
  if (http && given.urls && !config.host.empty()) throw UsageError("--urls names the servers: drop -c");
  if (given.transfers && !given.size && !http)
    throw UsageError("--transfers needs --size: the bytes each transfer downloads");
  if (given.force && !given.save) throw UsageError("--force applies to --save");
  if (given.time || given.bytes) throw UsageError("--transfers runs until COUNT transfers are done: drop -t and -n");
  if (given.rr || given.raw || given.udp) throw UsageError("--transfers does not go with --rr, --raw or -u");
  if (given.omit) throw UsageError("-O does not apply to --transfers");
  if (given.recv_mode)
    throw UsageError("--recv-mode applies to bulk tests; --transfers reads into one buffer (or its --save file)");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode)
    throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (config.cport_first) throw UsageError("--cport does not go with --transfers: each transfer needs a fresh port");
  if (http && (given.iperf3 || given.file || given.psk_file || config.spread_even))
    throw UsageError("--iperf3, -F, --psk-file and --spread are for testio and iperf3 servers, not HTTP downloads");
}

namespace {

[[noreturn]] void refuse_transfers(const std::string& sentence) { throw spec::SpecError(sentence); }

class Transfers final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    check_download_count(spec, limits);
    const std::uint64_t size = part_of<TransfersSpec>(spec).size;
    if (size == 0) refuse_transfers("--size must be at least 1 byte");
    if (size > limits.max_transfer_size)
      refuse_transfers("--size " + util::format_size(size) + " is above the cap of " + util::format_size(limits.max_transfer_size));
  }

  std::string extent(const spec::TestSpec& spec) const override { return transfers_extent(spec); }
  bool takes_setting(std::string_view name) const override { return part_has<TransfersSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return download_side(config, spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources& resources) const override {
    return serve_side(spec, resources.served_file);
  }
};

}  // namespace

const Workload& workload() {
  static const Transfers transfers;
  return transfers;
}

}  // namespace testio::workloads::transfers
