#include "mesh/rank.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "mesh/mesh_report.hpp"
#include "mesh/round_book.hpp"
#include "mesh/rounds.hpp"
#include "mesh/world.hpp"
#include "workloads/registry.hpp"
#include "util/spawn.hpp"

namespace testio::mesh {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kHostRecord = 512;      // bytes per rank in the MPI_Allgather of hosts
constexpr double kListenWait_s = 10;          // for the server child to say it listens
constexpr double kPairAllowance_s = 30;       // beyond -O + -t: connections, results, a slow peer
constexpr double kCountedPairLimit_s = 600;   // a counted test (-n, --num) has no window to add to
constexpr double kRoundAllowance_s = 15;      // beyond a pair's limit, for a rank to report its round
// Rank 0 keeps the pairs' full reports for --json while they total 64 MB as text (some 200 MB
// parsed: 64 ranks' `all` with 1-connection 10 s tests); past it, --mesh-results alone holds them.
constexpr std::size_t kReportBudget = 64'000'000;

// This rank's server, a child `testio -s` on its address writing to `errors`; its pid, or -1
// with the reason in `host`.
pid_t start_server(const std::string& binary, const util::MemoryFile& errors, Host& host) {
  const pid_t pid =
      util::spawn_process(binary, {"-s", "-B", host.address, "-p", std::to_string(host.port)}, {-1, errors.fd(), -1});
  if (pid < 0) {
    host.reason = "cannot run " + binary;
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kListenWait_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (errors.text().find("listening on") != std::string::npos) {
      host.listening = true;
      return pid;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      host.reason = util::last_complaint(errors.text());
      return -1;
    }
    std::this_thread::sleep_for(20ms);
  }
  ::kill(pid, SIGKILL);
  util::reap_process(pid);
  host.reason = "its server did not listen within 10 s";
  return -1;
}

// How long a pair's client may run before it is killed.
double pair_limit_s(const spec::TestSpec& spec) {
  return spec.duration_s > 0 ? spec.duration_s + spec.omit_s + kPairAllowance_s : kCountedPairLimit_s;
}

// One pair's client, given the test as a profile (`test`: the child's --config /dev/fd/3).
PairResult run_pair(const std::string& binary, const util::MemoryFile* test, const config::Config& config,
                    const Host& from, const Host& to, bool to_lost, const std::function<void()>& alive) {
  PairResult pair;
  pair.from = from.rank, pair.to = to.rank, pair.from_address = from.address, pair.to_address = to.address;
  if (!to.listening || to_lost || !test) {
    pair.reason = !test ? "rank " + std::to_string(from.rank) + " " + from.reason
                        : "rank " + std::to_string(to.rank) +
                              (to_lost ? " is lost: it stopped answering rank 0" : " is not listening: " + to.reason);
    return pair;
  }
  const util::MemoryFile out("testio-pair-out"), errors("testio-pair-err");
  const pid_t pid = util::spawn_process(binary,
                                        {"-c", to.address, "-p", std::to_string(to.port), "--config", "/dev/fd/3",
                                         "-B", from.address, "--json"},
                                        {out.fd(), errors.fd(), test->fd()});
  if (pid < 0) {
    pair.reason = "cannot run " + binary;
    return pair;
  }
  const double limit = pair_limit_s(config.spec);
  util::ProcessEnd end = util::wait_for_process(pid, limit, alive);
  pair = pair_from_run(pair, end.exit_code, out.text(), util::last_complaint(errors.text()));
  if (end.killed_at_deadline) {
    pair.ok = false;
    pair.reason = "the test took longer than " + std::to_string(static_cast<int>(limit)) + " s and was killed";
  }
  return pair;
}

// --mesh-results on rank 0: FILE opened to append, or null with a warning (the report is still
// printed; the exit code says the file was not written).
std::unique_ptr<std::ofstream> open_results(const std::string& path) {
  if (path.empty()) return nullptr;
  auto results = std::make_unique<std::ofstream>(path, std::ios::app);
  if (*results) return results;
  std::cerr << "testio: cannot open --mesh-results " << path << ": " << std::strerror(errno)
            << "; the rounds are kept for the report only\n";
  return nullptr;
}

}  // namespace

std::string address_of_rank(const std::string& pattern, std::uint32_t rank) {
  std::string address = pattern;
  for (std::size_t at = address.find("{rank}"); at != std::string::npos; at = address.find("{rank}"))
    address.replace(at, 6, std::to_string(rank));
  return address;
}

int run_mesh(const config::Config& config, const std::string& binary) {
  World world;
  if (world.size() < 2)
    throw std::runtime_error("--mesh needs two ranks or more: run it under mpirun (-np K, or -H h1,h2,...)");
  Host me;
  me.rank = world.rank();
  me.port = config.port;
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  me.address = config.bind_address.empty() ? std::string(name) : address_of_rank(config.bind_address, world.rank());
  // Nothing below throws before the gather: a rank that left early would leave the others waiting.
  // The children's files live in memory, not in a scratch directory: a rank killed outright
  // leaves nothing on disk (and its children die with it: util::spawn_process).
  std::unique_ptr<util::MemoryFile> test, server_errors;
  try {
    test = std::make_unique<util::MemoryFile>("testio-mesh-test");
    test->write_all(nlohmann::json{{"spec", spec::to_json(config.spec, spec::Form::report)}}.dump());
    server_errors = std::make_unique<util::MemoryFile>("testio-mesh-server");
  } catch (const std::system_error& error) {
    me.reason = std::string("cannot hold its children's files: ") + error.what();
  }
  const pid_t server = server_errors ? start_server(binary, *server_errors, me) : -1;
  std::vector<Host> hosts;
  for (const std::string& record : world.all_gather(encode_host(me), kHostRecord)) {
    const auto rank = static_cast<std::uint32_t>(hosts.size());
    try {
      hosts.push_back(decode_host(record, rank));
    } catch (const std::invalid_argument& error) {  // every rank reads the same records, and goes on alike
      hosts.push_back(Host{rank, "rank " + std::to_string(rank), 0, false, error.what(), ""});
    }
  }
  const Schedule schedule = parse_schedule(config.mesh_schedule).value_or(Schedule::all);
  const std::vector<Round> plan = rounds(world.size(), schedule);
  const RunRound run_mine = [&](std::size_t round, const std::vector<bool>& lost, const std::function<void()>& alive) {
    nlohmann::ordered_json mine = nlohmann::ordered_json::array();
    for (const Pair& pair : plan[round])
      if (pair.from == world.rank())
        mine.push_back(to_json(run_pair(binary, test.get(), config, hosts[pair.from], hosts[pair.to], lost[pair.to], alive)));
    return mine.dump();
  };
  const double round_limit_s = pair_limit_s(config.spec) + kRoundAllowance_s;
  const bool first = world.rank() == 0;
  std::unique_ptr<std::ofstream> results = first ? open_results(config.mesh_results) : nullptr;
  RoundBook book(world.size(), results.get(), kReportBudget);
  const RoundsEnd ended = first ? conduct_rounds(world, plan, book, run_mine, {round_limit_s, config.stall_timeout_s})
                                : follow_rounds(world, plan, run_mine, round_limit_s);
  if (ended.any_lost) world.leave_without_finalize();
  if (server > 0) {
    ::kill(server, SIGTERM);
    util::wait_for_process(server, 10);
  }
  if (!first) return ended.to_the_end ? 0 : 1;
  for (Host& host : hosts) host.lost = book.lost(host.rank);
  const bool reports_dropped = book.reports_dropped();
  MeshRun run{schedule, plan.size(), workloads::describe(config.spec), config.spec.direction == spec::Direction::reverse,
              config.mesh_slow_fraction, hosts, std::move(book).collect(plan, hosts)};
  if (reports_dropped && config.output == config::OutputFormat::json)
    std::cerr << "testio: the pairs' full reports passed " << kReportBudget / 1'000'000
              << " MB, so mesh.pairs[].report is null: --mesh-results FILE holds them\n";
  if (config.output == config::OutputFormat::text) std::cout << mesh_text(run);
  else std::cout << mesh_json(run).dump(2) << "\n";
  std::cout.flush();
  const bool written = config.mesh_results.empty() || (results && results->good());
  if (results && !results->good())
    std::cerr << "testio: writing --mesh-results " << config.mesh_results << " failed; the report above is whole\n";
  return mesh_succeeded(run) && written ? 0 : 1;
}

}  // namespace testio::mesh
