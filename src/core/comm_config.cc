// Merges public Options with the parameter table into a CommConfig.
#include "core/comm_config.h"

#include <mutex>

#include "diag/log.h"
#include "kernels/isa.h"

namespace chorus::core {

CommConfig resolve_config(const Options& options, const config::Config& cfg) {
  static std::once_flag log_once;
  std::call_once(log_once, [&] {
    diag::log_configure(cfg.debug, cfg.debug_subsys, cfg.debug_file);
    for (const auto& p : config::params()) {
      auto v = config::Environment::process().get(p.name);
      if (v) CHORUS_LOG(INFO, Env, "%s set by environment to '%s'", p.name, v->c_str());
    }
    // load() accepted only known names, so parse_isa() succeeds; the CPU may lower the level.
    const kernels::Isa isa = kernels::set_isa(
        kernels::parse_isa(cfg.kernel_isa).value_or(kernels::best_isa()));
    CHORUS_LOG(INFO, Env, "reduction kernels: %s (CHORUS_KERNEL_ISA=%s)", kernels::isa_name(isa),
               cfg.kernel_isa.c_str());
  });

  CommConfig c;
  c.timeout = options.timeout.count() > 0 ? options.timeout
                                          : std::chrono::milliseconds(*cfg.timeout_s * 1000);
  c.connect_timeout = options.connect_timeout.count() > 0
                          ? options.connect_timeout
                          : std::chrono::milliseconds(*cfg.connect_timeout_s * 1000);
  c.algo = options.algo.empty() ? cfg.algo : options.algo;
  c.desync_check = cfg.desync_check;
  c.chunk_bytes = *cfg.chunk_bytes;
  c.small_bytes = *cfg.small_bytes;
  c.eager_bytes = *cfg.eager_bytes;
  c.socket_buffer_bytes = *cfg.socket_buffer_bytes;
  c.socket_addr = cfg.socket_addr;
  c.socket_ifname = cfg.socket_ifname;
  c.spin_us = *cfg.spin_us;
  c.buff_bytes = *cfg.buff_bytes;
  c.single_copy = cfg.single_copy;
  c.host_id = cfg.host_id;
  c.transport = cfg.transport;
  c.stats = options.stats;
  c.cost_model = cfg.cost_model;
  c.tuning_file = cfg.tuning_file;
  c.tuning_table = cfg.tuning_table;
  return c;
}

Result<CommConfig> resolve_process_config(const Options& options) {
  CHORUS_ASSIGN_OR_RETURN(config::Config cfg, config::process_config());
  return resolve_config(options, cfg);
}

}  // namespace chorus::core
