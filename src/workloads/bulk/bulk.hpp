// The bulk workload ("stream"): each connection carries one direction's bytes for the window, or
// its share of -n bytes (-F: its part of the file), from a sender that then half-closes to a
// receiver that reads to EOF. Which StreamTask does each depends on the engine
// (engines/bulk_streams.hpp); this unit decides what each sender sends and how each receiver reads.
#pragma once

#include <memory>

#include "workloads/forward.hpp"

namespace testio::workloads::bulk {

const Workload& workload();

// How a peer that does not speak testio's protocol ends its data (iperf3).
struct Options {
  // False when the data end with a control message instead of EOF: receivers then keep the
  // kernel's wakeup mark, since bytes held back for a batch would never be counted.
  bool data_end_with_eof = true;
  // The peer is a plain receiver (--raw): a sender is done only once the peer closes; generated
  // data are hashed too (a raw sink prints its digest), and no digests come back to compare.
  bool peer_is_plain = false;
};

// One side's bulk streams for `spec`, as iperf3's sessions run them too.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Options options = {});
// The client's side, sending -F's file (config.file) in parts when one is given: it then completes
// `spec` with the file's size. Throws std::runtime_error when the file cannot be used.
std::unique_ptr<TestSide> make_client_side(const config::Config& config, spec::TestSpec& spec, Options options = {});

}  // namespace testio::workloads::bulk
