// Whether two byte ranges share a byte: the test every algorithm that may run in place
// makes before it writes an output that could still be input. Compared as addresses
// (integers), so ranges of unrelated objects compare well-defined; an empty range
// overlaps nothing.
#pragma once
#include <cstddef>
#include <cstdint>

namespace chorus::util {

inline bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

}  // namespace chorus::util
