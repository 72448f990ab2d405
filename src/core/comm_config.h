// A communicator's resolved settings (CommConfig): the per-communicator (kComm) rows of
// the parameter table, each from its Options field when set, else from the environment,
// else the table's default. No default is written here: every value comes from the table.
#pragma once
#include <chrono>
#include <string>

#include "chorus/options.h"
#include "config/config.h"
#include "util/status.h"

namespace chorus::core {

struct CommConfig {
  // One field per kComm row of config/params.def, named as the row (and as its Options
  // field): timeout, connect_timeout, algo, chunk_bytes, transport, hang_report, ...
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) CHORUS_COMM_FIELD_##scope(type, field)
#define CHORUS_COMM_FIELD_kComm(type, field) config::value_t<config::ParamType::type> field{};
#define CHORUS_COMM_FIELD_kProcess(type, field)
#define CHORUS_COMM_FIELD_kLaunch(type, field)
#include "config/params.def"
#undef CHORUS_COMM_FIELD_kLaunch
#undef CHORUS_COMM_FIELD_kProcess
#undef CHORUS_COMM_FIELD_kComm
#undef CHORUS_PARAM
  // Rank 0 prints every rank's statistics table at destruction: CHORUS_STATS=1 in the
  // environment (Options::stats only collects).
  bool print_stats = false;
};

// `options` over `env` (the parsed environment). Pure: reads nothing else, sets nothing.
// kInvalidArgument naming the field or variable for a bad value, including an
// algorithm override or cost-model list the selector does not accept.
Result<CommConfig> resolve_config(const Options& options, const config::Config& env);

// The process-wide Config; on first success also applies the process settings
// (apply_process_settings, once per process); then resolve_config over it.
Result<CommConfig> resolve_process_config(const Options& options);

}  // namespace chorus::core
