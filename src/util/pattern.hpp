// Generated payload for senders: not all zeros, so no compressing or deduplicating middlebox (or
// a zero-page shortcut) can flatter a result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/page_buffer.hpp"

namespace testio::util {

// Numerical Recipes' LCG (cheap, and its top byte varies), one step a byte. Stepped byte by byte
// the chain of multiplies took about 2 ms a 2 MiB block, which every sender's worker fills before
// its first byte; the same bytes come from kLanes interleaved copies of the generator that each
// jump kLanes steps at a time, a loop the compiler vectorises (0.4 ms).
inline void fill_pattern(char* data, std::size_t size) noexcept {
  constexpr std::uint32_t kMultiplier = 1664525u, kIncrement = 1013904223u;
  constexpr std::size_t kLanes = 32;
  std::uint32_t lanes[kLanes];
  std::uint32_t state = 0x9e3779b9u, jump_multiplier = 1, jump_increment = 0;
  for (std::uint32_t& lane : lanes) {
    state = state * kMultiplier + kIncrement;
    lane = state;
    jump_multiplier *= kMultiplier;
    jump_increment = jump_increment * kMultiplier + kIncrement;
  }
  std::size_t i = 0;
  for (; i + kLanes <= size; i += kLanes)
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      data[i + lane] = static_cast<char>(lanes[lane] >> 24);
      lanes[lane] = lanes[lane] * jump_multiplier + jump_increment;
    }
  for (std::size_t lane = 0; i < size; ++i, ++lane) data[i] = static_cast<char>(lanes[lane] >> 24);
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
