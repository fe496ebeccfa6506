// --raw, -F and --hash: plain TCP peers, and files sent with their digests.
#include "cli/groups.hpp"

#include <sys/stat.h>

#include "util/units.hpp"

namespace testio::cli {
namespace {

using util::UsageError;

// -F to a testio server: the file goes out once, split over the connections, and both sides hash it.
void check_file_send(const config::Config& config, const GivenOptions& given) {
  if (config.role != config::Role::client || given.raw || !given.file) return;
  if (given.time || given.bytes) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.rr || given.transfers) throw UsageError("-F sends a file; it does not go with --rr or --transfers");
  if (given.omit) throw UsageError("-O does not apply to -F: the whole file is the test");
  if ((given.reverse || given.bidir) && !given.iperf3)
    throw UsageError(std::string(given.reverse ? "-R" : "--bidir") +
                     " does not go with -F: the file is what the client sends, and only forward");
}

}  // namespace

void add_raw_options(OptionTable& options) {
  // clang-format off
  options.add_options("Raw TCP")
    ("raw", "Plain TCP, no testio protocol: with -s a sink any nc/socat can send to; with -c send to any receiver")
    ("hash", "Digest of the bytes with --raw: sha1, sha256 or none", value().default_value("sha1"),
       "NAME")
    ("F,file", "Client: send this file (with --raw to any receiver; to a testio server both sides compare "
               "digests). Server: the content --transfers download",
       value(), "FILE");
  // clang-format on
}

// --raw, -F and --hash: a digest is computed where a file is sent (-F) or a raw peer sends.
void fill_raw(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  config.raw = given.raw = args.count("raw") > 0;
  given.hash = args.count("hash") > 0;
  const std::string hash = args.value("hash");
  const util::HashKind kind =
      parse_name<util::HashKind>(hash, util::hash_from_string, "--hash '" + hash + "' is not one of sha1, sha256, none");
  if (auto file = typed(args, "file")) {
    given.file = true;
    config.file = *file;
  }
  // A raw sink and a raw sender hash what crosses; --raw --rr echoes and a testio server sinks.
  const bool hashes = config.raw ? !args.count("rr") : given.file && !args.count("server");
  config.spec.hash = hashes ? kind : util::HashKind::none;
  // -F to a testio server is counted by the file's size, so its rules see the test it will be. A
  // file that cannot be read stays for the client to say so when it opens it.
  struct stat file{};
  const bool sent_to_testio = given.file && !config.raw && args.count("client");
  if (sent_to_testio && ::stat(config.file.c_str(), &file) == 0 && file.st_size > 0) {
    config.spec.total_bytes = static_cast<std::uint64_t>(file.st_size);
    config.spec.duration_s = 0;
  }
}

void check_raw(const config::Config& config, const GivenOptions& given) {
  check_file_send(config, given);
  if (!given.raw) {
    if (given.hash && !given.file) throw UsageError("--hash applies to --raw and -F");
    return;
  }
  if (config.role != config::Role::client) return;
  if (given.file && (given.time || given.bytes)) throw UsageError("-F sends the whole file: drop -t and -n");
  if (given.omit) throw UsageError("-O needs the testio protocol: a plain receiver counts from the first byte");
  if (given.interval && given.rr) throw UsageError("-i applies to --raw sends; --rr --raw reports at the end");
  if (given.recv_mode || given.window) throw UsageError("--recv-mode and -w need the testio protocol, not --raw");
  if (given.transfers) throw UsageError("--transfers does not go with --rr or --raw");
  if (given.reverse || given.bidir)
    throw UsageError("-R and --bidir apply to bulk tests; --rr, --transfers and --raw have their own directions");
  if (given.engine) throw UsageError("--engine applies to testio's bulk tests; --rr, --transfers, --raw and --iperf3 run on asio");
  if (given.send_mode) throw UsageError("--send-mode applies to bulk tests (and -F); --rr, --transfers and --raw send their own way");
  if (!config.spec.marks_follow_rate)
    throw UsageError("--no-lowat applies to bulk tests; --rr, --transfers and --raw leave the marks to the kernel");
  if (config.cport_first) throw UsageError("--cport applies to a testio test's data connections, not --raw");
  if (given.iface_stats) throw UsageError("--iface-stats needs the testio protocol, not --raw");
}
}  // namespace testio::cli
