// Test data and reference results for the multi-rank collective tests: exact inputs
// per (dtype, op, rank, index), the expected reduction, opaque patterns for data
// movement, bit-exact comparison with readable mismatch text, and guarded buffers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/types.h"

namespace chorus::mp {

inline constexpr DataType kAllTypes[] = {
    DataType::kInt8,    DataType::kUint8,    DataType::kInt32,   DataType::kUint32,
    DataType::kInt64,   DataType::kUint64,   DataType::kFloat16, DataType::kBfloat16,
    DataType::kFloat32, DataType::kFloat64};
inline constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin,
                                       ReduceOp::kMax, ReduceOp::kAvg};
// Counts every combination runs with (elements per rank / per block); 20011 elements
// straddle the 64 KiB eager / small-message thresholds (20 KB for int8, 160 KB for
// 64-bit types).
inline constexpr std::size_t kCounts[] = {0, 1, 7, 1031, 20011};

std::size_t elem_size(DataType t);
bool is_float(DataType t);
// Elements per block so that `blocks` blocks hold a little over 4 MiB.
std::size_t big_count(DataType t, int blocks);

// Reduction input of `rank` (of `nranks`) for elements [first, first + count), written
// as `t` into dst. Values are small so every order of reduction is exact, in every
// type; avg inputs on floats sum to a multiple of nranks.
void fill_reduce_input(DataType t, ReduceOp op, int rank, int nranks, std::size_t first,
                       std::size_t count, int salt, void* dst);
// The exact result of reducing every rank's fill_reduce_input with op.
void fill_reduce_expected(DataType t, ReduceOp op, int nranks, std::size_t first,
                          std::size_t count, int salt, void* dst);
// Opaque bit patterns (any bits, NaNs included) owned by `rank`, elements
// [first, first + count).
void fill_pattern(DataType t, int rank, std::size_t first, std::size_t count, int salt,
                  void* dst);

// "" when equal bit for bit; otherwise the first mismatching element and how many.
std::string compare(DataType t, const void* got, const void* expected, std::size_t count);
std::uint64_t hash_bytes(const void* p, std::size_t n, std::uint64_t seed);

// "all_reduce float32 sum count=7 out-of-place root=1" (root < 0 omitted).
std::string label(const char* coll, DataType t, const char* op, std::size_t count,
                  const char* placement, int root = -1);

// A byte buffer with a guard zone after it, to catch writes past the end.
class Buffer {
 public:
  Buffer(DataType t, std::size_t count);
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  unsigned char* at(std::size_t element) { return bytes_.data() + element * elem_; }
  std::size_t bytes() const { return size_; }
  void fill(unsigned char b);
  // "" when the guard zone is intact; otherwise text naming the label.
  std::string guard_damage(const std::string& what) const;

 private:
  std::size_t elem_;
  std::size_t size_;
  std::vector<unsigned char> bytes_;
};

}  // namespace chorus::mp
