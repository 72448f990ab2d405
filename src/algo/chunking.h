// Shared mechanics of the algorithms: how a buffer splits into pipelined chunks, and
// small post/wait helpers over transport::Transport. No collective logic here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algo/algorithm.h"
#include "algo/patterns.h"

namespace chorus::algo {

// At most this many chunks per block, so step numbers (round * chunks + chunk) fit 32 bits.
inline constexpr std::size_t kMaxChunksPerBlock = 1 << 16;

// Splits blocks of up to `max_count` elements into chunks of `elems` elements (the last
// one shorter). Every rank derives the same chunking from the same (args, max_count).
struct Chunking {
  std::size_t elems = 1;  // elements per chunk, >= 1
  std::size_t chunks(std::size_t count) const { return (count + elems - 1) / elems; }
  Block chunk(std::size_t count, std::size_t c) const {
    const std::size_t off = c * elems;
    return Block{off, count - off < elems ? count - off : elems};
  }
};
Chunking make_chunking(const CollArgs& a, std::size_t max_count);

// Bytes of one element of a.dtype.
std::size_t elem_bytes(const CollArgs& a);

// Waits for every request in `reqs` (null entries skipped) with a.deadline, then clears it.
Status wait_all(transport::Transport& t, std::vector<transport::RequestPtr>& reqs, Deadline d);

// Posts a send (to `to`) and a receive (from `from`) under `tag` and waits for both.
// A side of zero bytes is skipped (both ends derive the same sizes); peer -1 = no side.
Status exchange(transport::Transport& t, transport::Tag tag, int to, const void* send_data,
                std::size_t send_bytes, int from, void* recv_data, std::size_t recv_bytes,
                Deadline d);

// Copies `bytes` from `src` to `dst` unless they are the same pointer.
void copy_if_distinct(void* dst, const void* src, std::size_t bytes);

}  // namespace chorus::algo
