// CommConfig: a communicator's resolved settings, the per-communicator (kComm) rows of the
// parameter table (config/params.def), each from its Options field when set, else from the
// environment, else the table's default (core/comm_config.h resolves them). No default is
// written here: every value comes from the table. Every part of a communicator reads them.
#pragma once
#include <chrono>
#include <string>

#include "config/config.h"

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

}  // namespace chorus::core
