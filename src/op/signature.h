// Operation signatures: (kind, dtype, count, op, root) packed into the 64 bits every
// message tag carries, so a receiver can tell that its peer is in a different operation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/types.h"
#include "op/kind.h"

namespace chorus::op {

// Never 0. Layout (low to high): kind+1 (5 bits), dtype (4), op (3), root+1 (16, 0 when the
// collective has no root), count (34; larger counts are folded modulo 2^34). Bits 62 and
// 63 are left 0: transport::kSigPerPeer, set by core on point-to-point messages (their
// seqs count per peer pair), and transport::kSigUnordered, set per message by core when
// it runs the operation concurrently with earlier ones.
// `has_op` / `has_root` say whether op and root are part of the collective's identity.
std::uint64_t make_signature(CollKind kind, DataType dtype, std::size_t count, ReduceOp op,
                             bool has_op, int root, bool has_root);

// A point-to-point message's signature, the same on sender and receiver: its size, with
// transport::kSigPerPeer set (its seq counts per peer pair).
std::uint64_t p2p_signature(std::size_t bytes);

// "all_reduce(float32 x 1024, sum)", "broadcast(int8 x 7, root 3)", "barrier()".
std::string describe_signature(std::uint64_t sig);

}  // namespace chorus::op
