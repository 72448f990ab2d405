// Run-time choice of conversion code: per level, the best kernel for each direction and
// format (the level's own, else the highest lower level's), and the calls of convert.h.
#include "kernels/convert.h"

#include <array>
#include <cstdlib>

#include "kernels/convert_table.h"

namespace chorus::kernels {
namespace {

// Slots of a level's table: direction x format.
enum Slot { kToFp16, kToBf16, kFromFp16, kFromBf16, kNumSlots };

struct Table {
  ConvertFns fns;
  Isa isa[kNumSlots];  // the level whose code each slot runs
};

ConvertFns level_fns(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return scalar_converters();
    case Isa::kSse: return sse_converters();
    case Isa::kAvx2: return avx2_converters();
    case Isa::kAvx512: return avx512_converters();
  }
  return {};
}

template <class Fn>
void fill(Fn& slot, Isa& slot_isa, Fn fn, Isa l) {
  if (slot == nullptr && fn != nullptr) {
    slot = fn;
    slot_isa = l;
  }
}

// Fills the slots of `t` still empty from level `l`.
void take(Table& t, const ConvertFns& f, Isa l) {
  fill(t.fns.to_fp16, t.isa[kToFp16], f.to_fp16, l);
  fill(t.fns.to_bf16, t.isa[kToBf16], f.to_bf16, l);
  fill(t.fns.from_fp16, t.isa[kFromFp16], f.from_fp16, l);
  fill(t.fns.from_bf16, t.isa[kFromBf16], f.from_bf16, l);
}

// Only takes function addresses, so tables for levels the CPU lacks are safe to build.
const Table& table(Isa isa) {
  static const std::array<Table, kNumIsas> tables = [] {
    std::array<Table, kNumIsas> all{};
    for (int top = 0; top < kNumIsas; ++top)
      for (int l = top; l >= 0; --l)
        take(all[top], level_fns(static_cast<Isa>(l)), static_cast<Isa>(l));
    return all;
  }();
  return tables[static_cast<int>(isa)];
}

// true for fp16, false for bf16; aborts for any other type (REQUIRES violated).
bool is_fp16(DataType half) {
  if (half == DataType::kFloat16) return true;
  if (half == DataType::kBfloat16) return false;
  std::abort();
}

void narrow_at(Isa isa, DataType to, const float* src, std::uint16_t* dst, std::size_t count) {
  const Table& t = table(isa);
  (is_fp16(to) ? t.fns.to_fp16 : t.fns.to_bf16)(src, dst, count);
}

void widen_at(Isa isa, DataType from, const std::uint16_t* src, float* dst, std::size_t count) {
  const Table& t = table(isa);
  (is_fp16(from) ? t.fns.from_fp16 : t.fns.from_bf16)(src, dst, count);
}

}  // namespace

void narrow_f32(DataType to, const float* src, std::uint16_t* dst, std::size_t count) {
  narrow_at(active_isa(), to, src, dst, count);
}

void widen_to_f32(DataType from, const std::uint16_t* src, float* dst, std::size_t count) {
  widen_at(active_isa(), from, src, dst, count);
}

bool narrow_f32_with(Isa isa, DataType to, const float* src, std::uint16_t* dst,
                     std::size_t count) {
  if (!cpu_supports(isa)) return false;
  narrow_at(isa, to, src, dst, count);
  return true;
}

bool widen_to_f32_with(Isa isa, DataType from, const std::uint16_t* src, float* dst,
                       std::size_t count) {
  if (!cpu_supports(isa)) return false;
  widen_at(isa, from, src, dst, count);
  return true;
}

Isa convert_isa(Isa isa, DataType half) {
  // Both directions of a format come from the same level at every level today.
  const Table& t = table(isa);
  return t.isa[is_fp16(half) ? kToFp16 : kToBf16];
}

}  // namespace chorus::kernels
