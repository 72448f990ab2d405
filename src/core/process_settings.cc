// The process-wide settings: logging, kernel level and SIGUSR1 handler, once per process.
#include "core/process_settings.h"

#include <mutex>

#include "core/dump_signal.h"
#include "diag/log.h"
#include "kernels/isa.h"

namespace chorus::core {

namespace {

kernels::Isa to_isa(config::KernelIsa isa) {
  switch (isa) {
    case config::KernelIsa::kAvx512: return kernels::Isa::kAvx512;
    case config::KernelIsa::kAvx2: return kernels::Isa::kAvx2;
    case config::KernelIsa::kSse: return kernels::Isa::kSse;
    case config::KernelIsa::kScalar: return kernels::Isa::kScalar;
    case config::KernelIsa::kAuto: break;
  }
  return kernels::best_isa();
}

}  // namespace

void apply_process_settings(const config::Config& cfg, const config::Environment& env) {
  static std::once_flag once;
  std::call_once(once, [&] {
    diag::log_configure(cfg.debug, cfg.debug_subsys, cfg.debug_file);
    for (const auto& p : config::params()) {
      auto v = env.get(p.name);
      if (v) CHORUS_LOG(INFO, Env, "%s set by environment to '%s'", p.name, v->c_str());
    }
    // The CPU may lower the level.
    const kernels::Isa isa = kernels::set_isa(to_isa(cfg.kernel_isa));
    CHORUS_LOG(INFO, Env, "reduction kernels: %s (CHORUS_KERNEL_ISA=%s)", kernels::isa_name(isa),
               config::name_of(cfg.kernel_isa));
    if (cfg.sigusr1) install_dump_signal();
  });
}

}  // namespace chorus::core
