// fp16 (IEEE binary16) and bf16 conversions to and from fp32.
#pragma once
#include <cstdint>

namespace chorus::kernels {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);  // round to nearest even; overflow -> inf; NaN kept
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_bf16(float f);  // round to nearest even; NaN kept

}  // namespace chorus::kernels
