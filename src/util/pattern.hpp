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

// iperf3's --repeating-payload: ASCII digits over and over, for a capture a person reads (and a
// path that compresses them: that is what the option shows).
inline void fill_digits(char* data, std::size_t size) noexcept {
  for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<char>('0' + i % 10);
}

inline PageBuffer make_pattern(std::size_t size, bool repeating_digits = false) {
  PageBuffer data(size);
  if (repeating_digits)
    fill_digits(data.data(), size);
  else
    fill_pattern(data.data(), size);
  return data;
}

}  // namespace testio::util
