// The bulk workload ("stream"): each connection carries one direction's bytes for the window, or
// its share of -n bytes (-F: its part of the file), from a sender that then half-closes to a
// receiver that reads to EOF. Which StreamTask does each depends on the engine
// (engines/bulk_streams.hpp); this unit decides what each sender sends and how each receiver reads.
#pragma once

#include <memory>

#include "workloads/workload.hpp"

namespace testio::workloads::bulk {

const Workload& workload();

// How a peer that does not speak testio's protocol ends its data (iperf3).
struct Options {
  // False when the data end with a control message instead of EOF: receivers then keep the
  // kernel's wakeup mark, since bytes held back for a batch would never be counted.
  bool data_end_with_eof = true;
};

// One side's bulk streams for `spec`, as iperf3's sessions run them too.
std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Options options = {});

}  // namespace testio::workloads::bulk
