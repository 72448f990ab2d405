// fp32 <-> fp16 / bf16 conversion of whole buffers (wire compression of gradients),
// vectorised at run time like reduce(). No I/O, no threads.
#pragma once
#include <cstddef>
#include <cstdint>

#include "chorus/types.h"
#include "kernels/isa.h"

namespace chorus::kernels {

// dst[i] = src[i] rounded to `to` (DataType::kFloat16 or kBfloat16), for i < count.
// Rounding is to nearest, ties to even. fp16: magnitudes that round above 65504 become
// inf; results below 2^-14 are subnormal (no flush to zero). A NaN stays NaN with its
// sign and quiet bit set, keeping the top payload bits (fp16: bits 22..13 of the fp32
// payload; bf16: bits 22..16). Identical to float_to_half / float_to_bf16 (half.h).
// Runs the code of active_isa() (fp16 needs F16C: kAvx2 and up; below that, and for
// bf16 at every level, integer arithmetic); every level gives the same bits, given the
// default MXCSR (no flush-to-zero, no denormals-are-zero, round to nearest).
// REQUIRES: `to` is kFloat16 or kBfloat16; src and dst do not overlap. Thread-safe.
void narrow_f32(DataType to, const float* src, std::uint16_t* dst, std::size_t count);

// dst[i] = src[i] (`from`: kFloat16 or kBfloat16) as fp32, exactly, for i < count.
// bf16: the bits shifted left by 16 (a signalling NaN stays signalling). fp16: a NaN
// comes back quiet (quiet bit set, payload kept; what F16C does), everything else exact.
// REQUIRES: as narrow_f32. Thread-safe.
void widen_to_f32(DataType from, const std::uint16_t* src, float* dst, std::size_t count);

// The same at level `isa` instead of active_isa() (a conversion the level has no code
// for runs a lower level's, see convert_isa()). Return false and touch nothing when
// this CPU lacks `isa`. For tests and benchmarks.
bool narrow_f32_with(Isa isa, DataType to, const float* src, std::uint16_t* dst,
                     std::size_t count);
bool widen_to_f32_with(Isa isa, DataType from, const std::uint16_t* src, float* dst,
                       std::size_t count);

// The level whose code converts to or from `half` when level `isa` is requested.
Isa convert_isa(Isa isa, DataType half);

}  // namespace chorus::kernels
