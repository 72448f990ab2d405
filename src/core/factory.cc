// Builds concrete transports for a communicator: shm when every rank is on this host
// (CHORUS_TRANSPORT=auto, the default, or shm), else TCP. A hybrid (shm within a host,
// TCP between hosts) is a later step.
#include "core/factory.h"

#include <unistd.h>

#include <fstream>

#include "algo/signature.h"
#include "bootstrap/tcp_store.h"
#include "config/config.h"
#include "diag/log.h"
#include "transport/shm/shm_transport.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

// hostname + boot id: equal only for processes of one running kernel (one host).
std::string host_identity() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::string boot;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot);
  return std::string(name) + "/" + boot;
}

Result<std::unique_ptr<transport::Transport>> create_tcp(const TransportRequest& req,
                                                         const bootstrap::Store& store,
                                                         const Exchange& exchange) {
  tcp::TcpOptions opts;
  opts.rank = req.rank;
  opts.size = req.size;
  opts.job_token = req.token;
  // Bind/advertise precedence: CHORUS_SOCKET_ADDR, then CHORUS_SOCKET_IFNAME (not yet a
  // CommConfig field: read from the process config), then the address reaching the store.
  std::string store_side = bootstrap::tcp_store_local_address(store);
  if (store_side.empty()) store_side = "127.0.0.1";
  opts.listen_host = req.cfg.socket_addr;
  if (opts.listen_host == "0.0.0.0") opts.advertise_host = store_side;  // all interfaces: asked
  if (opts.listen_host.empty()) {
    opts.interface_name = req.cfg.socket_ifname;
    opts.listen_host = store_side;
  }
  opts.eager_bytes = req.cfg.eager_bytes;
  opts.socket_buffer_bytes = req.cfg.socket_buffer_bytes;
  opts.spin_us = req.cfg.spin_us;
  opts.connect_deadline = req.deadline;
  opts.describe_sig = algo::describe_signature;
  return tcp::create_tcp_transport(
      opts, [&](const std::string& mine) { return exchange("tcp_addr", mine); });
}

Result<std::unique_ptr<transport::Transport>> create_shm(const TransportRequest& req,
                                                         const Exchange& exchange) {
  shm::ShmOptions opts;
  opts.rank = req.rank;
  opts.size = req.size;
  opts.job_token = req.token;
  opts.ring_bytes = req.cfg.buff_bytes;
  opts.single_copy = req.cfg.single_copy;
  opts.setup_deadline = req.deadline;
  opts.describe_sig = algo::describe_signature;
  return shm::create_shm_transport(opts, exchange);
}

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const Exchange& exchange) {
  const std::string& kind = req.cfg.transport;
  if (kind != "tcp" && kind != "shm" && kind != "auto")
    return invalid_argument(str_printf(
        "CHORUS_TRANSPORT='%s' is not a transport (known: auto, shm, tcp)", kind.c_str()));
  if (kind == "tcp") return create_tcp(req, store, exchange);
  const std::string me = host_identity();
  CHORUS_ASSIGN_OR_RETURN(auto hosts, exchange("host", me));
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    if (hosts[r] == me) continue;
    if (kind == "shm")
      return invalid_argument(str_printf(
          "CHORUS_TRANSPORT=shm needs every rank on one host, but rank %zu is on '%s' and rank "
          "%d on '%s'", r, hosts[r].c_str(), req.rank, me.c_str()));
    CHORUS_LOG(INFO, Init, "rank %d: ranks span hosts (rank %zu on '%s'): using tcp", req.rank,
               r, hosts[r].c_str());
    return create_tcp(req, store, exchange);
  }
  return create_shm(req, exchange);
}

}  // namespace chorus::core
