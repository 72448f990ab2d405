// Resolves a communicator's settings (CommConfig, core/comm_settings.h): public Options
// over the parsed CHORUS_* environment over the table's defaults.
#pragma once
#include "chorus/options.h"
#include "config/config.h"
#include "core/comm_settings.h"
#include "util/status.h"

namespace chorus::core {

// `options` over `env` (the parsed environment). Pure: reads nothing else, sets nothing.
// kInvalidArgument naming the field or variable for a bad value, including an
// algorithm override or cost-model list the selector does not accept.
Result<CommConfig> resolve_config(const Options& options, const config::Config& env);

// The process-wide Config; on first success also applies the process settings
// (apply_process_settings, once per process); then resolve_config over it.
Result<CommConfig> resolve_process_config(const Options& options);

}  // namespace chorus::core
