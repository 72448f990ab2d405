// Resolves a communicator's settings: public Options over the CHORUS_* parameter table.
#include "core/comm_config.h"

#include "algo/selector.h"
#include "core/placement.h"
#include "core/process_settings.h"

namespace chorus::core {

Result<CommConfig> resolve_config(const Options& options, const config::Config& env) {
  CHORUS_ASSIGN_OR_RETURN(config::Config merged, config::with_options(env, options));
  CommConfig c;
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) CHORUS_RESOLVE_##scope(field)
#define CHORUS_RESOLVE_kComm(field) c.field = value_of(merged.field);
#define CHORUS_RESOLVE_kProcess(field)
#define CHORUS_RESOLVE_kLaunch(field)
  // Every kComm row has a default, so every optional number holds a value.
  auto value_of = [](const auto& v) {
    if constexpr (requires { v.has_value(); }) return *v;
    else return v;
  };
#include "config/params.def"
#undef CHORUS_RESOLVE_kLaunch
#undef CHORUS_RESOLVE_kProcess
#undef CHORUS_RESOLVE_kComm
#undef CHORUS_PARAM
  c.print_stats = env.stats && c.stats;
  // The algorithm override and the cost-model list are the selector's language: checked
  // here too, so a bad one fails like any other bad value (before any rendezvous).
  algo::SelectorConfig sel;
  sel.override_spec = c.algo;
  sel.model_spec = c.cost_model;
  CHORUS_RETURN_IF_ERROR(algo::Selector::create(sel).status());
  PlacementPolicy placement;
  if (!parse_placement(c.placement, placement))
    return invalid_argument("CHORUS_PLACEMENT / Options::placement must be auto, off or a factor "
                            "1-16, got '" + c.placement + "'");
  return c;
}

Result<CommConfig> resolve_process_config(const Options& options) {
  CHORUS_ASSIGN_OR_RETURN(config::Config env, config::process_config());
  apply_process_settings(env, config::Environment::process());
  return resolve_config(options, env);
}

}  // namespace chorus::core
