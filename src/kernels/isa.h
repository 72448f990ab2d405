// Instruction-set levels of the reduction kernels: detection, names, and the process-wide choice.
#pragma once
#include <optional>
#include <string_view>

#include "chorus/types.h"

namespace chorus::kernels {

// Kernel instruction-set levels, lowest first. Each level implies the ones below it.
//   kScalar  plain C++ (always available; the reference every other level must match bit for bit)
//   kSse     SSE4.2 (128-bit)
//   kAvx2    AVX2 + F16C + FMA (256-bit)
//   kAvx512  AVX-512 F/BW/DQ/VL (512-bit)
enum class Isa : int { kScalar = 0, kSse = 1, kAvx2 = 2, kAvx512 = 3 };
inline constexpr int kNumIsas = 4;

// True when this CPU can run kernels of level `isa` (detected once, thread-safe).
bool cpu_supports(Isa isa);
// The highest level this CPU supports.
Isa best_isa();

// "scalar", "sse", "avx2", "avx512"; "invalid" for a bad value.
const char* isa_name(Isa isa);
// Name of the level currently in use by reduce() (same as isa_name(active_isa())).
const char* isa_name();
// Parses a CHORUS_KERNEL_ISA value: "auto" (-> best_isa()), "scalar", "sse", "avx2",
// "avx512" (case-sensitive). nullopt for anything else.
std::optional<Isa> parse_isa(std::string_view name);

// Selects the level reduce() uses from now on, in every thread. A level this CPU lacks is
// lowered to the best one it has. Returns the level in effect. Thread-safe; intended to be
// called once at configuration time (calls racing with reduce() are safe: each reduce()
// runs wholly with one level). The default is best_isa().
Isa set_isa(Isa isa);
// The level reduce() uses now.
Isa active_isa();

// The level whose code computes (dtype, op) when level `isa` is requested: `isa` itself or
// a lower one where `isa` has no kernel for that pair (e.g. fp16 at kSse runs the scalar code).
Isa kernel_isa(Isa isa, DataType dtype, ReduceOp op);

}  // namespace chorus::kernels
