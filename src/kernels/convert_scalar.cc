// Scalar fp32 <-> fp16 / bf16 conversion loops: the reference every other level matches.
#include <bit>

#include "kernels/convert_table.h"
#include "kernels/half.h"

namespace chorus::kernels {
namespace {

void to_fp16(const float* src, std::uint16_t* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_half(src[i]);
}

void to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

// half_to_float, with a NaN's quiet bit set (as F16C's vcvtph2ps does).
void from_fp16(const std::uint16_t* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t h = src[i];
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    float f = half_to_float(h);
    if (nan) f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 0x00400000u);
    dst[i] = f;
  }
}

void from_bf16(const std::uint16_t* src, float* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
}

}  // namespace

ConvertFns scalar_converters() { return {to_fp16, to_bf16, from_fp16, from_bf16}; }

}  // namespace chorus::kernels
