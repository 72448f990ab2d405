// init_from_env: launcher environment -> store (hosted here if we are its rank 0) -> Comm.
#include "core/init_env.h"

#include "bootstrap/launch_env.h"
#include "bootstrap/tcp_store.h"
#include "core/comm_config.h"
#include "core/process_settings.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

Result<std::unique_ptr<Comm>> init_from_env(const Options& options,
                                            const config::Environment& env) {
  CHORUS_ASSIGN_OR_RETURN(config::Config cfg, config::load(env));
  apply_process_settings(cfg, env);
  CHORUS_ASSIGN_OR_RETURN(CommConfig comm_cfg, resolve_config(options, cfg));
  CHORUS_ASSIGN_OR_RETURN(bootstrap::LaunchInfo info, bootstrap::read_launch_env(env));
  diag::log_set_rank(info.rank);
  CHORUS_LOG(INFO, Init, "launcher %s: rank %d of %d, store %s:%d%s", info.launcher.c_str(),
             info.rank, info.size, info.store_host.c_str(), info.store_port,
             info.host_store ? " (hosted here)" : "");

  std::shared_ptr<void> keepalive;
  if (info.host_store) {
    auto server = bootstrap::TcpStoreServer::start("0.0.0.0", info.store_port);
    if (!server.has_value())
      return server.status().with_context(
          str_printf("rank 0 could not host the store on port %d", info.store_port));
    keepalive = std::shared_ptr<bootstrap::TcpStoreServer>(std::move(server).value());
  }
  Deadline deadline = Deadline::after(comm_cfg.connect_timeout);
  auto store = bootstrap::connect_tcp_store(info.store_host, info.store_port, deadline);
  if (!store.has_value())
    return store.status().with_context(str_printf("connecting to the store at %s:%d (%s)",
                                                  info.store_host.c_str(), info.store_port,
                                                  info.launcher.c_str()));
  return create_comm(info.rank, info.size, std::move(store).value(), comm_cfg,
                     std::move(keepalive));
}

}  // namespace chorus::core
