// Inputs built so that every exact result is known, and the check of a result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "plan.h"

namespace chorus_stress {

// Identifies the inputs of one operation: the same on every rank for the same op.
struct DataKey {
  std::int64_t step;
  int op_index;  // position in the step's list
};

// Fills `send` (buffer_counts(op, n).send elements) with what rank `rank` of the op's
// communicator of `n` ranks contributes: small integers, so that every sum over ranks
// is exact in every dtype the patterns use (bf16 included).
void fill_send(const OpSpec& op, const DataKey& key, int rank, int n, void* send);

struct Mismatch {
  std::size_t index;
  double expected;
  double got;
};
// Checks `recv` against the exact result of `op` on rank `rank` of `n`; the first wrong
// element, or nullopt when every element is right.
std::optional<Mismatch> check_recv(const OpSpec& op, const DataKey& key, int rank, int n,
                                   const void* recv);

}  // namespace chorus_stress
