#include "workloads/layout.hpp"

namespace testio::workloads {

DirectionLayout DirectionLayout::of(spec::Direction direction, std::uint32_t connections) noexcept {
  switch (direction) {
    case spec::Direction::reverse: return {0, connections};
    case spec::Direction::bidir: return {connections, connections};
    case spec::Direction::forward: break;
  }
  return {connections, 0};
}

std::vector<std::uint32_t> DirectionLayout::connections(bool forward_direction) const {
  std::vector<std::uint32_t> list;
  const std::uint32_t first = forward_direction ? 0 : forward;
  for (std::uint32_t i = 0; i < count(forward_direction); ++i) list.push_back(first + i);
  return list;
}

}  // namespace testio::workloads
