#include "cli/options.hpp"

#include <optional>
#include <vector>

#include "cli/groups.hpp"
#include "cli/iperf3_options.hpp"
#include "cli/manual.hpp"
#include "cli/profile.hpp"
#include "util/units.hpp"
#include "workloads/registry.hpp"

namespace testio::cli {

namespace {

using util::UsageError;

OptionTable make_options() {
  OptionTable options("testio",
                           "testio: multi-connection TCP throughput tester.\n"
                           "  testio -s                 serve tests\n"
                           "  testio -c HOST [N]        run a test with N connections\n"
                           "  testio exporter           serve Prometheus probes (testio exporter --help)\n"
                           "  testio plot R.json -o OUT draw a report as .png, .svg or .html (testio plot --help)\n"
                           "  testio campaign ... -o D  run a grid of tests, repeated, with statistics (testio campaign --help)\n"
                           "  testio compare A B        whether B differs from A, cell by cell (testio compare --help)");
  add_general_options(options);
  add_raw_options(options);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (!group.after_the_test) group.add(options);
  add_test_options(options);
  add_tuning_options(options);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (group.after_the_test) group.add(options);
  add_metrics_options(options);
  add_mesh_options(options);
  add_iperf3_options(options);
  // For the build, which installs what they print; not in --help (cli/manual.hpp).
  options.add_options("Packaging")
    ("man", "Print the manual page testio(1) in roff and exit")
    ("bash-completion", "Print the bash completion script and exit")
    ("iperf3-options", "Print docs/iperf3-options.md's table of iperf3's options and exit");
  options.positional("connections", "[N]");
  return options;
}

// Long option names a profile may set: every option but those that only make sense typed.
bool profile_may_set(const OptionTable& options, const std::string& key) {
  if (key == "help" || key == "version" || key == "config" || key == "connections" || key == "man" ||
      key == "bash-completion" || key == "iperf3-options")
    return false;
  return options.has_long_name(key);
}

// No --engine: a client's bulk streams run on io_uring where their modes allow it. It was the
// fastest engine here at 1, 8, 32 and 128 connections, with BBR and with Reno (docs/engines.md,
// "The default"). The request lets a side that cannot set io_uring up run asio instead
// (engines::settle_default_engine). A raw peer, iperf3's and the mesh's tests keep asio, as does a
// workload a profile gave another engine.
void choose_default_engine(config::Config& config, const GivenOptions& given) {
  if (given.engine || config.role != config::Role::client || config.raw || config.iperf3 || config.mesh) return;
  auto choose = [](spec::TestSpec& spec) {
    if (!spec.is("stream") || spec.engine != spec::Engine::asio ||
        !spec::engine_refusal(spec::Engine::uring, spec.recv_mode, spec.send_mode).empty())
      return;
    spec.engine = spec::Engine::uring;
    spec.engine_fallback = true;
  };
  choose(config.spec);
  for (spec::TestSpec& part : config.spec.with) choose(part);
}

// Only what was typed (or given by a profile's tokens) is set: the rest keeps the spec's defaults
// or a profile's spec. given.profile_buffer: that spec set -l, so the smaller defaults of -u,
// --iperf3 and a raw sink do not apply.
void fill_config(const ParsedOptions& args, config::Config& config, GivenOptions& given) {
  fill_general(args, config, given);
  fill_raw(args, config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (!group.after_the_test) group.fill(args, config, given);
  fill_test(args, config, given);
  fill_tuning(args, config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (group.after_the_test) group.fill(args, config, given);
  fill_metrics(args, config, given);
  fill_mesh(args, config, given);
  fill_iperf3(args, config, given);
  spec::TestSpec& spec = config.spec;
  // A counted test has no window. (-F's is counted too, once the client has opened the file.)
  const bool http = !config.urls.empty();  // a URL names HTTP servers: the downloads' workload
  if (given.bytes || given.num || given.transfers || http) spec.duration_s = 0;
  const bool default_buffer = !given.buffer && !given.profile_buffer;
  // libcurl's receive buffer, one per HTTP slot and most of its memory: 1000 x 6 MB from nginx
  // on loopback took as long with 64 KiB as with 256 KiB or 1 MiB (docs/http.md).
  if (http && default_buffer) spec.buffer = 64 * 1024;
  // A sink reads whatever arrives: a smaller default buffer per connection, as many may be open.
  if (config.raw && config.role == config::Role::server && default_buffer) spec.buffer = 256 * 1024;
  // One plain connection without -i reports as a raw sink does: one line once it has closed. Not
  // in JSON, which a dashboard reads: there it is the document (and intervals) of any other test.
  const bool text = config.output == config::OutputFormat::text;
  if (config.raw && config.role == config::Role::client && spec.connections == 1 && !given.interval && text)
    spec.interval_s = 0;
  // A profile's workloads side by side take the window and intervals the command line set.
  for (spec::TestSpec& part : spec.with) spec::share_test_wide(spec, part);
  // Settings of a workload the test no longer runs: an older report's, or a profile's whose
  // workload the command line changed.
  workloads::keep_own_settings(spec);
  choose_default_engine(config, given);
}

// Whether the command line set `key` itself, or an option that excludes it.
bool typed_over(const ParsedOptions& args, const std::string& key) {
  return args.count(key) > 0 || (key == "parallel" && args.count("connections") > 0) ||
         (key == "time" && args.count("bytes") > 0) || (key == "bytes" && args.count("time") > 0) ||
         (key == "json" && args.count("json-stream") > 0) || (key == "json-stream" && args.count("json") > 0) ||
         (key == "server" && args.count("client") > 0) || (key == "client" && args.count("server") > 0);
}

// The command line's own rules, group by group (cli/*_options.cpp: which options go with which
// role, which exclude each other, and what only this side knows), then the rules of the test
// itself: workloads::check(), the function the server applies to every request too.
void validate(const config::Config& config, const GivenOptions& given) {
  check_general(config, given);
  check_raw(config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (!group.after_the_test) group.check(config, given);
  check_tuning(config, given);
  check_test(config, given);
  for (const workloads::OptionGroup& group : workloads::option_groups())
    if (group.after_the_test) group.check(config, given);
  check_metrics(config, given);
  check_mesh(config, given);
  // A profile's "with" (workloads side by side) needs a testio server at the other end.
  if (!config.spec.with.empty()) {
    if (config.role == config::Role::server) throw util::UsageError("\"with\" (workloads side by side) is the client's");
    if (config.raw || config.iperf3 || config.mesh)
      throw util::UsageError(std::string("\"with\" (workloads side by side) needs a testio server: ") +
                             (config.raw ? "--raw" : config.iperf3 ? "--iperf3" : "--mesh") + " runs one workload");
  }
  try {
    workloads::check(config.spec, config.limits);
  } catch (const spec::SpecError& error) {
    throw util::UsageError(error.what());
  }
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  OptionTable options = make_options();
  std::vector<std::string> tokens(argv, argv + argc);
  ParsedOptions args = options.parse(tokens);
  std::optional<Profile> profile;
  if (args.count("config")) {
    // The profile's entries go first and are dropped where the command line set the same thing;
    // its spec, if it has one, is the test the command line then changes.
    profile = read_profile(args.value("config"),
                           [&](const std::string& key) { return profile_may_set(options, key); },
                           [&](const std::string& key) { return typed_over(args, key); });
    tokens.insert(tokens.begin() + 1, profile->tokens.begin(), profile->tokens.end());
    args = options.parse(tokens);
  }
  if (args.count("help") || args.count("man") || args.count("bash-completion") || args.count("iperf3-options")) {
    parsed.action = ParsedCommandLine::Action::help;
    parsed.help_text = args.count("man")               ? man_page(options)
                       : args.count("bash-completion") ? bash_completion(options)
                       : args.count("iperf3-options")  ? iperf3_options_markdown()
                                                       : options.help(help_groups(options));
    return parsed;
  }
  // iperf3's -v prints the version: testio's -v is --verbose, which means nothing without a role.
  const bool version_alone = args.count("verbose") && !args.count("server") && !args.count("client") && !args.count("urls");
  if (args.count("version") || version_alone) {
    parsed.action = ParsedCommandLine::Action::version;
    return parsed;
  }
  if (profile && profile->spec) parsed.config.spec = *profile->spec;
  GivenOptions given;
  given.profile_buffer = profile && profile->names_buffer;
  try {
    fill_config(args, parsed.config, given);
  } catch (const spec::SpecError& error) {  // a profile's setting of the wrong kind, read by its workload
    throw UsageError(std::string("--config: ") + error.what());
  }
  validate(parsed.config, given);
  if (args.count("dry-run")) parsed.action = ParsedCommandLine::Action::check;
  return parsed;
}

}  // namespace testio::cli
