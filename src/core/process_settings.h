// The process-wide rows of the parameter table (scope kProcess) take effect here, and
// only here: logging (CHORUS_DEBUG, CHORUS_DEBUG_SUBSYS, CHORUS_DEBUG_FILE), the reduction
// kernels' level (CHORUS_KERNEL_ISA) and the SIGUSR1 dump handler (CHORUS_SIGUSR1).
#pragma once
#include "config/config.h"

namespace chorus::core {

// Applies `cfg`'s process-wide settings and logs, under ENV, every CHORUS_* variable set
// in `env`. Once per process: the first call wins, later calls do nothing (the first
// communicator's init calls it). Thread-safe.
void apply_process_settings(const config::Config& cfg, const config::Environment& env);

}  // namespace chorus::core
