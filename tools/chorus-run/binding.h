// Where each local rank runs (chorus-run --bind): every rank may use chorus-run's own
// affinity mask (none), or local rank i is bound to the i-th unit of that mask, wrapping
// around when the ranks outnumber the units: a core (its processors in the mask) or one
// processor.
#pragma once
#include <sched.h>

#include <functional>
#include <string>
#include <vector>

namespace chorus_run {

enum class Bind { kNone, kCore, kCpu };

// "none", "core" or "cpu"; false for anything else.
bool parse_bind(const std::string& text, Bind* out);

// A processor's core: its package and core id (sysfs topology; {-1, cpu} where unknown,
// so an unreadable topology makes every processor its own core).
struct CoreId {
  int package = -1;
  int core = -1;
  bool operator==(const CoreId&) const = default;
};
CoreId host_core_of(int cpu);

// The units of `mask` under `bind`, ordered by their lowest processor: one set per core
// (kCore, cores told apart by `core_of`) or per processor (kCpu); empty for kNone or an
// empty mask.
std::vector<cpu_set_t> bind_units(Bind bind, const cpu_set_t& mask,
                                  const std::function<CoreId(int)>& core_of = host_core_of);

// What local rank `local` is bound to: units[local % units.size()]. REQUIRES: units
// not empty.
const cpu_set_t& unit_of_rank(const std::vector<cpu_set_t>& units, int local);

// "0-3,8" style list of the processors in `set`.
std::string cpu_list(const cpu_set_t& set);

}  // namespace chorus_run
