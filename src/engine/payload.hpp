// Sender payload: one read-only buffer per worker, shared by its streams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace testio::engine {

// Not all zeros, so a compressing or deduplicating middlebox cannot flatter the result.
inline std::unique_ptr<char[]> make_payload(std::size_t size) {
  auto payload = std::make_unique_for_overwrite<char[]>(size);
  std::uint32_t state = 0x9e3779b9u;
  for (std::size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    payload[i] = static_cast<char>(state >> 24);
  }
  return payload;
}

}  // namespace testio::engine
