// Run-time choice of kernel level: CPU detection, per-level tables of the best kernel for each
// (dtype, op), the process-wide active level, and reduce() / reduce_with() on top of them.
#include <array>
#include <atomic>
#include <cstdlib>
#include <utility>

#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "kernels/reduce.h"

namespace chorus::kernels {
namespace {

constexpr int kNumOps = 4;  // kSum, kProd, kMin, kMax (kAvg combines as kSum)

bool detect(Isa isa) {
#if !defined(__x86_64__)
  return isa == Isa::kScalar;
#else
  __builtin_cpu_init();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kSse: return __builtin_cpu_supports("sse4.2");
    case Isa::kAvx2:
      return detect(Isa::kSse) && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      return detect(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#endif
}

struct Table {
  ReduceFn fn[kNumDataTypes][kNumOps];
  Isa isa[kNumDataTypes][kNumOps];  // level whose code fn is
};

ReduceFn level_kernel(Isa isa, DataType dtype, ReduceOp op) {
  switch (isa) {
    case Isa::kScalar: return scalar_kernel(dtype, op);
    case Isa::kSse: return sse_kernel(dtype, op);
    case Isa::kAvx2: return avx2_kernel(dtype, op);
    case Isa::kAvx512: return avx512_kernel(dtype, op);
  }
  return nullptr;
}

// Table of level `top`: for each pair the kernel of the highest level <= top that has one.
// Only takes function addresses, so building tables for levels the CPU lacks is safe.
Table build(Isa top) {
  Table t{};
  for (int d = 0; d < kNumDataTypes; ++d) {
    for (int o = 0; o < kNumOps; ++o) {
      for (int l = static_cast<int>(top); l >= 0; --l) {
        const ReduceFn fn = level_kernel(static_cast<Isa>(l), static_cast<DataType>(d),
                                         static_cast<ReduceOp>(o));
        if (fn != nullptr) {
          t.fn[d][o] = fn;
          t.isa[d][o] = static_cast<Isa>(l);
          break;
        }
      }
    }
  }
  return t;
}

const Table& table(Isa isa) {
  static const std::array<Table, kNumIsas> tables = [] {
    std::array<Table, kNumIsas> t{};
    for (int l = 0; l < kNumIsas; ++l) t[l] = build(static_cast<Isa>(l));
    return t;
  }();
  return tables[static_cast<int>(isa)];
}

std::atomic<int>& active_level() {
  static std::atomic<int> level{static_cast<int>(best_isa())};
  return level;
}

// Index of (dtype, op) in a Table; aborts on values outside the enums (REQUIRES violated).
std::pair<int, int> slot(DataType dtype, ReduceOp op) {
  const int d = static_cast<int>(dtype);
  int o = static_cast<int>(op);
  if (op == ReduceOp::kAvg) o = static_cast<int>(ReduceOp::kSum);
  if (d < 0 || d >= kNumDataTypes || o < 0 || o >= kNumOps) std::abort();
  return {d, o};
}

}  // namespace

bool cpu_supports(Isa isa) {
  static const std::array<bool, kNumIsas> supported = [] {
    std::array<bool, kNumIsas> s{};
    for (int l = 0; l < kNumIsas; ++l) s[l] = detect(static_cast<Isa>(l));
    return s;
  }();
  const int l = static_cast<int>(isa);
  return l >= 0 && l < kNumIsas && supported[l];
}

Isa best_isa() {
  for (int l = kNumIsas - 1; l > 0; --l) {
    if (cpu_supports(static_cast<Isa>(l))) return static_cast<Isa>(l);
  }
  return Isa::kScalar;
}

Isa set_isa(Isa isa) {
  int l = static_cast<int>(isa);
  if (l >= kNumIsas) l = kNumIsas - 1;
  while (l > 0 && !cpu_supports(static_cast<Isa>(l))) --l;
  if (l < 0) l = 0;
  active_level().store(l, std::memory_order_relaxed);
  return static_cast<Isa>(l);
}

Isa active_isa() { return static_cast<Isa>(active_level().load(std::memory_order_relaxed)); }

Isa kernel_isa(Isa isa, DataType dtype, ReduceOp op) {
  const auto [d, o] = slot(dtype, op);
  return table(isa).isa[d][o];
}

void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType dtype,
            ReduceOp op) {
  const auto [d, o] = slot(dtype, op);
  table(active_isa()).fn[d][o](dst, a, b, count);
}

bool reduce_with(Isa isa, void* dst, const void* a, const void* b, std::size_t count,
                 DataType dtype, ReduceOp op) {
  if (!cpu_supports(isa)) return false;
  const auto [d, o] = slot(dtype, op);
  table(isa).fn[d][o](dst, a, b, count);
  return true;
}

}  // namespace chorus::kernels
