// chorus-run --bind: the units of the launcher's affinity mask, from sysfs topology.
#include "binding.h"

#include <cstdio>

namespace chorus_run {

bool parse_bind(const std::string& text, Bind* out) {
  if (text == "none") *out = Bind::kNone;
  else if (text == "core") *out = Bind::kCore;
  else if (text == "cpu") *out = Bind::kCpu;
  else return false;
  return true;
}

namespace {
int read_topology(int cpu, const char* what) {
  char path[96];
  std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return -1;
  int v = -1;
  if (std::fscanf(f, "%d", &v) != 1) v = -1;
  std::fclose(f);
  return v;
}
}  // namespace

CoreId host_core_of(int cpu) {
  const int package = read_topology(cpu, "physical_package_id");
  const int core = read_topology(cpu, "core_id");
  if (package < 0 || core < 0) return CoreId{-1, cpu};
  return CoreId{package, core};
}

std::vector<cpu_set_t> bind_units(Bind bind, const cpu_set_t& mask,
                                  const std::function<CoreId(int)>& core_of) {
  std::vector<cpu_set_t> units;
  if (bind == Bind::kNone) return units;
  std::vector<CoreId> cores;  // cores[i]: the core of units[i] (kCore)
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &mask)) continue;
    std::size_t u = units.size();
    if (bind == Bind::kCore) {
      const CoreId id = core_of(c);
      for (u = 0; u < cores.size() && !(cores[u] == id); ++u) {
      }
      if (u == cores.size()) cores.push_back(id);
    }
    if (u == units.size()) {
      cpu_set_t none;
      CPU_ZERO(&none);
      units.push_back(none);
    }
    CPU_SET(c, &units[u]);
  }
  return units;
}

const cpu_set_t& unit_of_rank(const std::vector<cpu_set_t>& units, int local) {
  return units[static_cast<std::size_t>(local) % units.size()];
}

std::string cpu_list(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (last > c) out += '-' + std::to_string(last);
    c = last;
  }
  return out;
}

}  // namespace chorus_run
