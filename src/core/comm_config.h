// Resolves a communicator's settings: public Options over the CHORUS_* config table.
#pragma once
#include "chorus/options.h"
#include "config/config.h"
#include "core/comm_settings.h"

namespace chorus::core {

// Options fields that are set win; the rest come from `cfg`. Also configures logging
// from CHORUS_DEBUG* (once per process).
CommConfig resolve_config(const Options& options, const config::Config& cfg);

// resolve_config over the process environment; kInvalidArgument naming a bad variable.
Result<CommConfig> resolve_process_config(const Options& options);

}  // namespace chorus::core
