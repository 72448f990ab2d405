// Internal to src/kernels: the per-level conversion kernels that convert.cc chooses between.
#pragma once
#include <cstddef>
#include <cstdint>

namespace chorus::kernels {

using NarrowFn = void (*)(const float* src, std::uint16_t* dst, std::size_t n);
using WidenFn = void (*)(const std::uint16_t* src, float* dst, std::size_t n);

// One level's conversions; a null entry means the level has no code for it (the
// dispatcher then uses a lower level). Calling a non-null one REQUIRES cpu_supports(level).
struct ConvertFns {
  NarrowFn to_fp16 = nullptr;
  NarrowFn to_bf16 = nullptr;
  WidenFn from_fp16 = nullptr;
  WidenFn from_bf16 = nullptr;
};

ConvertFns scalar_converters();  // every entry set: the reference
ConvertFns sse_converters();
ConvertFns avx2_converters();
ConvertFns avx512_converters();

}  // namespace chorus::kernels
