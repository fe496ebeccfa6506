// Which way each of a test's data connections carries its data. Forward connections come first
// (the client opens them first); with -R every connection is reverse, with --bidir there are N of
// each. Who sends on a forward connection is the workload's: the client for bulk and rr, the
// server for transfers.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/test_spec.hpp"

namespace testio::workloads {

enum class Side { client, server };

struct DirectionLayout {
  std::uint32_t forward = 0;
  std::uint32_t reverse = 0;
  bool client_sends_forward = true;

  // A bulk test's layout for -R and --bidir.
  static DirectionLayout of(spec::Direction direction, std::uint32_t connections) noexcept;
  std::uint32_t total() const noexcept { return forward + reverse; }
  std::uint32_t count(bool forward_direction) const noexcept { return forward_direction ? forward : reverse; }
  bool is_forward(std::uint32_t connection) const noexcept { return connection < forward; }
  std::uint32_t index_in_direction(std::uint32_t connection) const noexcept {
    return is_forward(connection) ? connection : connection - forward;
  }
  // The test's connections of one direction, in order.
  std::vector<std::uint32_t> connections(bool forward_direction) const;
  // The direction whose intervals are shown as they happen: forward unless every connection is reverse.
  bool live_forward() const noexcept { return forward > 0; }
  // Whether `side` sends on the connections of one direction.
  bool sends(Side side, bool forward_direction) const noexcept {
    return (forward_direction == client_sends_forward) == (side == Side::client);
  }
  bool sends_on(Side side, std::uint32_t connection) const noexcept { return sends(side, is_forward(connection)); }
};

}  // namespace testio::workloads
