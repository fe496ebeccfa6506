#include "mesh/mesh_report.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace testio::mesh {
namespace {

std::string printf_text(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The pair's sender and receiver ranks: the data's direction, not who connected.
std::pair<std::uint32_t, std::uint32_t> data_direction(const MeshRun& run, const PairResult& pair) {
  return run.reverse ? std::pair{pair.to, pair.from} : std::pair{pair.from, pair.to};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string matrix_text(const MeshRun& run) {
  const std::size_t k = run.hosts.size();
  std::vector<std::vector<std::string>> cells(k, std::vector<std::string>(k, "-"));
  for (const PairResult& pair : run.pairs) {
    auto [sender, receiver] = data_direction(run, pair);
    cells[sender][receiver] = pair.ok ? printf_text("%.2f", pair.bits_per_second / 1e9) : "FAIL";
  }
  std::string text = "Gbit/s from the sender (row) to the receiver (column)\n  rank";
  for (std::size_t j = 0; j < k; ++j) text += printf_text("%9.0f", static_cast<double>(j));
  text += "\n";
  for (std::size_t i = 0; i < k; ++i) {
    text += printf_text("%6.0f", static_cast<double>(i));
    for (const std::string& cell : cells[i]) text += std::string(9 - std::min<std::size_t>(9, cell.size()), ' ') + cell;
    text += "\n";
  }
  return text;
}

double median_out(const std::vector<HostTotals>& totals) {
  std::vector<double> outs;
  for (const HostTotals& host : totals) outs.push_back(host.out_bits_per_second);
  return median(outs);
}

// Per host: whether it sent less than --mesh-slow of the median host, over all its pairs.
std::vector<bool> slow_hosts(const MeshRun& run, const std::vector<HostTotals>& totals) {
  const double middle = median_out(totals);
  std::vector<bool> slow;
  for (const HostTotals& host : totals) slow.push_back(middle > 0 && host.out_bits_per_second < run.slow_fraction * middle);
  return slow;
}

std::string findings_text(const MeshRun& run, const std::vector<HostTotals>& totals) {
  std::string text;
  std::vector<const PairResult*> ok;
  for (const PairResult& pair : run.pairs)
    if (pair.ok) ok.push_back(&pair);
  std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->bits_per_second < b->bits_per_second; });
  if (!ok.empty()) text += "slowest pairs:";
  for (std::size_t i = 0; i < std::min<std::size_t>(3, ok.size()); ++i) {
    auto [sender, receiver] = data_direction(run, *ok[i]);
    text += (i ? ", " : " ") + std::to_string(sender) + " -> " + std::to_string(receiver) + " " +
            printf_text("%.2f Gbit/s", ok[i]->bits_per_second / 1e9);
  }
  if (!ok.empty()) text += "\n";
  const double middle = median_out(totals);
  const std::vector<bool> slow = slow_hosts(run, totals);
  for (std::size_t i = 0; i < totals.size(); ++i)
    if (slow[i])
      text += "slow host: rank " + std::to_string(i) + " (" + run.hosts[i].address + ") sent " +
              printf_text("%.2f", totals[i].out_bits_per_second / 1e9) + " Gbit/s over its pairs, below " +
              printf_text("%.0f%%", run.slow_fraction * 100) + " of the median " + printf_text("%.2f", middle / 1e9) + "\n";
  for (const Host& host : run.hosts)
    if (!host.lost.empty()) text += "rank " + std::to_string(host.rank) + " (" + host.address + ") was " + host.lost + "\n";
  for (const PairResult& pair : run.pairs)
    if (!pair.ok)
      text += "failed: " + std::to_string(pair.from) + " (" + pair.from_address + ") -> " + std::to_string(pair.to) + " (" +
              pair.to_address + "): " + pair.reason + "\n";
  return text;
}

}  // namespace

std::vector<HostTotals> host_totals(const MeshRun& run) {
  std::vector<HostTotals> totals(run.hosts.size());
  for (const PairResult& pair : run.pairs) {
    auto [sender, receiver] = data_direction(run, pair);
    if (!pair.ok) {
      ++totals[pair.from].failed_pairs;
      ++totals[pair.to].failed_pairs;
      continue;
    }
    totals[sender].out_bits_per_second += pair.bits_per_second;
    totals[sender].sent_bytes += pair.sent_bytes;
    totals[receiver].in_bits_per_second += pair.bits_per_second;
    totals[receiver].received_bytes += pair.received_bytes;
  }
  return totals;
}

bool mesh_succeeded(const MeshRun& run) {
  // A pair is ok when its client exited 0: its counts agreed (TCP) and it ran to its end.
  return std::all_of(run.pairs.begin(), run.pairs.end(), [](const PairResult& pair) { return pair.ok; });
}

std::string mesh_text(const MeshRun& run) {
  std::size_t failed = 0;
  for (const PairResult& pair : run.pairs) failed += !pair.ok;
  std::string text = "testio mesh: " + std::to_string(run.hosts.size()) + " ranks, schedule " + to_string(run.schedule) +
                     ", " + std::to_string(run.pairs.size()) + " pairs in " + std::to_string(run.rounds) +
                     " rounds, each " + run.test + (run.reverse ? " (-R: the server sent)" : "") + "\n";
  text += matrix_text(run);
  const std::vector<HostTotals> totals = host_totals(run);
  text += "  rank  address                         out Gbit/s   in Gbit/s  failed pairs\n";
  for (std::size_t i = 0; i < totals.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "%6zu  %-30s %11.2f %11.2f %13u%s\n", i, run.hosts[i].address.c_str(),
                  totals[i].out_bits_per_second / 1e9, totals[i].in_bits_per_second / 1e9, totals[i].failed_pairs,
                  !run.hosts[i].listening       ? "  (not listening)"
                  : !run.hosts[i].lost.empty() ? "  (lost)"
                                               : "");
    text += line;
  }
  text += findings_text(run, totals);
  text += std::to_string(run.pairs.size() - failed) + " of " + std::to_string(run.pairs.size()) + " pairs measured\n";
  return text;
}

nlohmann::ordered_json mesh_json(const MeshRun& run) {
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array(), pairs = nlohmann::ordered_json::array();
  const std::vector<HostTotals> totals = host_totals(run);
  const std::vector<bool> slow = slow_hosts(run, totals);
  for (std::size_t i = 0; i < run.hosts.size(); ++i)
    hosts.push_back({{"rank", i}, {"address", run.hosts[i].address}, {"port", run.hosts[i].port},
                     {"listening", run.hosts[i].listening}, {"reason", run.hosts[i].reason}, {"lost", run.hosts[i].lost},
                     {"slow", bool(slow[i])},
                     {"out_bits_per_second", totals[i].out_bits_per_second},
                     {"in_bits_per_second", totals[i].in_bits_per_second}, {"sent_bytes", totals[i].sent_bytes},
                     {"received_bytes", totals[i].received_bytes}, {"failed_pairs", totals[i].failed_pairs}});
  for (const PairResult& pair : run.pairs) pairs.push_back(to_json(pair));
  return {{"mesh",
           {{"ranks", run.hosts.size()}, {"schedule", to_string(run.schedule)}, {"rounds", run.rounds},
            {"test", run.test}, {"reverse", run.reverse}, {"succeeded", mesh_succeeded(run)},
            {"hosts", std::move(hosts)}, {"pairs", std::move(pairs)}}}};
}

}  // namespace testio::mesh
