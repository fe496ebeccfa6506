// One pair's test in a mesh and each rank's own record, as ranks send them to rank 0 over MPI.
// Rank 0 parses what every rank sent (peer input: checked field by field, fuzzed by
// tests/fuzz/mesh_fuzzer.cpp), so a rank that sends nonsense fails its own pairs, not the report.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace testio::mesh {

// A rank as the others see it: where its server listens, or why it does not.
struct Host {
  std::uint32_t rank = 0;
  std::string address;
  std::uint16_t port = 0;
  bool listening = false;
  std::string reason;  // why not
  std::string lost;    // on rank 0, after the rounds: why this rank left them ("lost in round 5: ..."), or empty
};
std::string encode_host(const Host& host);  // "1|ADDRESS|PORT|REASON", for MPI_Allgather
// Throws std::invalid_argument with a sentence when `record` is not one encode_host() writes.
Host decode_host(std::string_view record, std::uint32_t rank);

struct PairResult {
  std::uint32_t from = 0, to = 0;          // client rank, server rank
  std::string from_address, to_address;
  bool ok = false;
  std::string reason;                      // why it failed
  double bits_per_second = 0;              // what the receiver counted (the forward direction with --bidir)
  std::uint64_t sent_bytes = 0, received_bytes = 0, retransmits = 0;
  // The pair's testio JSON report; null when none came or rank 0 dropped it (--mesh-results holds
  // them). Shared and never changed: a pair is copied as it goes to the book, the report is not.
  std::shared_ptr<const nlohmann::ordered_json> report;
};

nlohmann::ordered_json to_json(const PairResult& pair);
// A rank's pairs as it sent them: a JSON array of to_json()'s objects, each naming ranks below
// `ranks`. Throws std::invalid_argument with a sentence.
std::vector<PairResult> parse_pairs(std::string_view text, std::uint32_t ranks);

// The figures of a pair from its client's exit code and JSON report (text as printed; empty when
// none came) and the last line it wrote on stderr.
PairResult pair_from_run(PairResult pair, int exit_code, const std::string& report_text, const std::string& complaint);

}  // namespace testio::mesh
