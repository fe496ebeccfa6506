// Generated payload for senders: not all zeros, so no compressing or deduplicating middlebox (or
// a zero-page shortcut) can flatter a result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/page_buffer.hpp"

namespace testio::util {

inline void fill_pattern(char* data, std::size_t size) noexcept {
  std::uint32_t state = 0x9e3779b9u;
  for (std::size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG: cheap, and its top byte varies
    data[i] = static_cast<char>(state >> 24);
  }
}

inline PageBuffer make_pattern(std::size_t size) {
  PageBuffer data(size);
  fill_pattern(data.data(), size);
  return data;
}

}  // namespace testio::util
