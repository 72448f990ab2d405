// CollArgs: the arguments of one collective on one rank, as api/ builds them, core stamps
// them (comm, seq, signature, deadline) and every algorithm receives them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "chorus/types.h"
#include "config/defaults.h"
#include "op/level_log.h"
#include "transport/transport.h"
#include "util/deadline.h"

namespace chorus::op {

// Arguments of one collective on one rank, already validated by the API layer.
// Counts are in elements of `dtype`. Buffers may alias as the public API allows
// (send == recv means in place).
struct CollArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // meaning per collective, as in the public API
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  // all_to_all_v only: size() entries each, in elements.
  const std::size_t* send_counts = nullptr;
  const std::size_t* send_displs = nullptr;
  const std::size_t* recv_counts = nullptr;
  const std::size_t* recv_displs = nullptr;
  // Tag base of this op: every message uses {comm, seq, step} (op/tag_space.h).
  std::uint32_t comm = 0;
  std::uint64_t seq = 0;
  std::uint64_t sig = 0;  // operation signature (op/signature.h), carried by every tag
  // Added to every step: the phases of a composite algorithm (hier*.cc) each get their
  // own step range (op::phase_step_base), while comm and seq stay the op's, so a peer in
  // another operation is still seen (its signature differs, or its later seq overtakes).
  std::uint32_t step_base = 0;
  Deadline deadline;
  std::size_t chunk_bytes = config::defaults::chunk_bytes;  // pipelining unit (CHORUS_CHUNK_SIZE)
  // Messages up to this many bytes are latency-bound (CHORUS_SMALL_MSG_SIZE): algorithms
  // that run sub-steps pick latency-optimised ones for them.
  std::size_t small_bytes = config::defaults::small_bytes;
  // Where a hierarchical algorithm records its levels (hier*.cc, op::LevelScope) when the
  // operation is watched (timeline, Profiler); null otherwise. Only the top-level
  // algorithm records: algo::phase_args clears it for the algorithms inside a phase.
  LevelLog* levels = nullptr;
  transport::Tag tag(std::uint32_t step) const {
    return transport::Tag{comm, seq, step_base + step, sig};
  }
};

}  // namespace chorus::op
