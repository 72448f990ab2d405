// fp16 (IEEE binary16) and bf16 <-> fp32 conversions, bit-exact with round to nearest even.
#include "kernels/half.h"

#include <bit>
#include <cstdint>

namespace chorus::kernels {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in fp32.
    const float mag = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -mag : mag;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  std::uint32_t out;
  if (x >= 0x47800000u) {  // >= 2^16 in magnitude, inf or NaN
    if (x > 0x7f800000u) {
      out = 0x7e00u | ((x >> 13) & 0x3ffu);  // NaN stays NaN (quiet), payload top bits kept
    } else {
      out = 0x7c00u;
    }
  } else if (x < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Adding 0.5 aligns the value so the FPU rounds (nearest even) at bit 2^-24.
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5
    const float sum = std::bit_cast<float>(x) + magic;
    out = std::bit_cast<std::uint32_t>(sum) - 0x3f000000u;
  } else {
    const std::uint32_t mant_odd = (x >> 13) & 1u;
    x += 0xc8000000u + 0xfffu + mant_odd;  // rebias exponent (-112 << 23) and round
    out = x >> 13;                         // a carry into exponent 31 gives inf
  }
  return static_cast<std::uint16_t>(out | sign);
}

float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // NaN: keep sign/payload, quiet
  }
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

}  // namespace chorus::kernels
