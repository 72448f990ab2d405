// Names of the kernel levels and parsing of CHORUS_KERNEL_ISA values.
#include "kernels/isa.h"

namespace chorus::kernels {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kSse: return "sse";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "invalid";
}

const char* isa_name() { return isa_name(active_isa()); }

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "auto") return best_isa();
  for (int l = 0; l < kNumIsas; ++l) {
    if (name == isa_name(static_cast<Isa>(l))) return static_cast<Isa>(l);
  }
  return std::nullopt;
}

}  // namespace chorus::kernels
