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
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "mesh/mesh_report.hpp"
#include "mesh/world.hpp"
#include "workloads/registry.hpp"
#include "util/spawn.hpp"

namespace testio::mesh {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::size_t kHostRecord = 512;      // bytes per rank in the MPI_Allgather of hosts
constexpr double kListenWait_s = 10;          // for the server child to say it listens
constexpr double kPairAllowance_s = 30;       // beyond -O + -t: connections, results, a slow peer
constexpr double kCountedPairLimit_s = 600;   // a counted test (-n, --num) has no window to add to

std::string read_file(const fs::path& path) { return util::read_child_file(path.string()); }

std::string last_complaint(const fs::path& path) { return util::last_complaint(read_file(path)); }


// This rank's server, a child `testio -s` on its address; its pid, or -1 with the reason in `host`.
pid_t start_server(const std::string& binary, const fs::path& scratch, Host& host) {
  const fs::path errors = scratch / "server.err";
  const pid_t pid = util::spawn_process(binary, {"-s", "-B", host.address, "-p", std::to_string(host.port)}, "",
                                        errors.string());
  if (pid < 0) {
    host.reason = "cannot run " + binary;
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kListenWait_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(errors).find("listening on") != std::string::npos) {
      host.listening = true;
      return pid;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      host.reason = last_complaint(errors);
      return -1;
    }
    std::this_thread::sleep_for(20ms);
  }
  ::kill(pid, SIGKILL);
  util::reap_process(pid);
  host.reason = "its server did not listen within 10 s";
  return -1;
}

PairResult run_pair(const std::string& binary, const fs::path& scratch, const config::Config& config,
                    const Host& from, const Host& to) {
  PairResult pair;
  pair.from = from.rank, pair.to = to.rank, pair.from_address = from.address, pair.to_address = to.address;
  if (!to.listening) {
    pair.reason = "rank " + std::to_string(to.rank) + " is not listening: " + to.reason;
    return pair;
  }
  const fs::path out = scratch / "pair.out", errors = scratch / "pair.err";
  const pid_t pid = util::spawn_process(binary,
                                        {"-c", to.address, "-p", std::to_string(to.port), "--config",
                                         (scratch / "test.json").string(), "-B", from.address, "--json"},
                                        out.string(), errors.string());
  if (pid < 0) {
    pair.reason = "cannot run " + binary;
    return pair;
  }
  const spec::TestSpec& spec = config.spec;
  const double limit = spec.duration_s > 0 ? spec.duration_s + spec.omit_s + kPairAllowance_s : kCountedPairLimit_s;
  util::ProcessEnd end = util::wait_for_process(pid, limit);
  pair = pair_from_run(pair, end.exit_code, read_file(out), last_complaint(errors));
  if (end.killed_at_deadline) {
    pair.ok = false;
    pair.reason = "the test took longer than " + std::to_string(static_cast<int>(limit)) + " s and was killed";
  }
  return pair;
}

// Rank 0's book of what the ranks sent, round by round: each rank's pairs, or why what it sent
// could not be read (its later rounds are still read).
struct Gathered {
  std::vector<std::vector<PairResult>> by_rank;
  std::vector<std::string> problems;
};

// One round's texts from every rank into the book, and each pair into --mesh-results as a JSON
// line, flushed, so a run cut short keeps every round it finished.
void take_round(Gathered& book, const std::vector<std::string>& texts, std::size_t round, std::ofstream* results) {
  for (std::size_t rank = 0; rank < texts.size(); ++rank) try {
      for (PairResult& pair : parse_pairs(texts[rank], static_cast<std::uint32_t>(texts.size()))) {
        if (results) {
          nlohmann::ordered_json line = {{"round", round + 1}};
          line.update(to_json(pair));
          *results << line.dump() << '\n';
        }
        book.by_rank[rank].push_back(std::move(pair));
      }
    } catch (const std::invalid_argument& error) {
      book.problems[rank] = error.what();
    }
  if (results) results->flush();
}

// Rank 0: every scheduled pair, from what its client rank sent or, where it sent nothing usable, failed.
std::vector<PairResult> collect(const std::vector<Round>& schedule, const std::vector<Host>& hosts,
                                const Gathered& book) {
  std::vector<PairResult> pairs;
  for (const Round& round : schedule)
    for (const Pair& scheduled : round) {
      PairResult pair;
      pair.from = scheduled.from, pair.to = scheduled.to;
      pair.from_address = hosts[pair.from].address, pair.to_address = hosts[pair.to].address;
      const std::string& problem = book.problems[pair.from];
      pair.reason = problem.empty() ? "rank " + std::to_string(pair.from) + " sent no result for it"
                                    : "rank " + std::to_string(pair.from) + " sent " + problem;
      for (const PairResult& candidate : book.by_rank[pair.from])
        if (candidate.from == pair.from && candidate.to == pair.to) pair = candidate;
      pairs.push_back(std::move(pair));
    }
  return pairs;
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
  std::string scratch_name = (fs::temp_directory_path() / "testio-mesh-XXXXXX").string();
  const bool scratch_made = ::mkdtemp(scratch_name.data()) != nullptr;
  const fs::path scratch = scratch_name;
  if (scratch_made)
    std::ofstream(scratch / "test.json") << nlohmann::json{{"spec", spec::to_json(config.spec, spec::Form::report)}}.dump();
  else
    me.reason = "cannot make a scratch directory in " + fs::temp_directory_path().string();
  const pid_t server = scratch_made ? start_server(binary, scratch, me) : -1;
  std::vector<Host> hosts;
  for (const std::string& record : world.all_gather(encode_host(me), kHostRecord)) {
    const auto rank = static_cast<std::uint32_t>(hosts.size());
    try {
      hosts.push_back(decode_host(record, rank));
    } catch (const std::invalid_argument& error) {  // every rank reads the same records, and goes on alike
      hosts.push_back(Host{rank, "rank " + std::to_string(rank), 0, false, error.what()});
    }
  }
  const Schedule schedule = parse_schedule(config.mesh_schedule).value_or(Schedule::all);
  const std::vector<Round> plan = rounds(world.size(), schedule);
  const bool first = world.rank() == 0;
  std::unique_ptr<std::ofstream> results = first ? open_results(config.mesh_results) : nullptr;
  Gathered book{std::vector<std::vector<PairResult>>(hosts.size()), std::vector<std::string>(hosts.size())};
  for (std::size_t r = 0; r < plan.size(); ++r) {
    world.barrier();  // the last round's tests are over everywhere
    nlohmann::ordered_json mine = nlohmann::ordered_json::array();
    for (const Pair& pair : plan[r])
      if (pair.from == world.rank()) mine.push_back(to_json(run_pair(binary, scratch, config, hosts[pair.from], hosts[pair.to])));
    // After every round, not only at the end: whatever happens later, rank 0 holds this one. (A
    // gather is no barrier: a rank with nothing to send returns from it at once.)
    std::vector<std::string> texts = world.gather_to_first(mine.dump());
    if (first) take_round(book, texts, r, results.get());
  }
  world.barrier();  // no server stops while a test of the last round may still run against it
  if (server > 0) {
    ::kill(server, SIGTERM);
    util::wait_for_process(server, 10);
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  if (world.rank() != 0) return 0;
  MeshRun run{schedule, plan.size(), workloads::describe(config.spec), config.spec.direction == spec::Direction::reverse,
              config.mesh_slow_fraction, hosts, collect(plan, hosts, book)};
  if (config.output == config::OutputFormat::text) std::cout << mesh_text(run);
  else std::cout << mesh_json(run).dump(2) << "\n";
  std::cout.flush();
  const bool written = config.mesh_results.empty() || (results && results->good());
  if (results && !results->good())
    std::cerr << "testio: writing --mesh-results " << config.mesh_results << " failed; the report above is whole\n";
  return mesh_succeeded(run) && written ? 0 : 1;
}

}  // namespace testio::mesh
