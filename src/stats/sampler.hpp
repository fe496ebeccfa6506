// Turns live counters into interval records by subtracting its own previous snapshot (never by
// resetting the counters). Owner: the control thread; reads counters the workers write.
#pragma once

#include <vector>

#include "stats/counters.hpp"
#include "stats/interval.hpp"

namespace testio::stats {

class Sampler {
 public:
  // `fds` are the streams' sockets, for TCP_INFO; -1 where none should be read.
  Sampler(const StreamCounters* counters, std::vector<int> fds);

  // What moved since the previous take (or since the start), ending at `end_s`.
  IntervalRecord take(double start_s, double end_s, bool omitted);

 private:
  const StreamCounters* counters_;
  std::vector<int> fds_;
  std::vector<std::uint64_t> last_bytes_;
  std::vector<std::uint64_t> last_calls_;
  std::vector<DatagramTally> last_datagrams_;
};

}  // namespace testio::stats
