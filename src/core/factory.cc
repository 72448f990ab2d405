// Builds concrete transports for a communicator. CHORUS_TRANSPORT=auto (the default): shm
// when every rank is on this host; when the ranks span hosts, the hybrid "shm+tcp" (a
// RoutedTransport: shm among the ranks of each host, TCP between hosts; TCP alone for a rank
// with no other rank on its host). tcp or shm force one (shm fails across hosts).
#include "core/factory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "bootstrap/tcp_store.h"
#include "diag/log.h"
#include "op/signature.h"
#include "transport/routed.h"
#include "transport/shm/mem_registry.h"
#include "transport/shm/shm_transport.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

// CHORUS_HOST_ID, else hostname + boot id: equal only for processes of one running kernel
// (one host).
std::string host_identity(const CommConfig& cfg) {
  if (!cfg.host_id.empty()) return cfg.host_id;
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
  // Bind/advertise precedence: CHORUS_SOCKET_ADDR, then CHORUS_SOCKET_IFNAME, then the
  // address reaching the store.
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
  opts.describe_sig = op::describe_signature;
  return tcp::create_tcp_transport(opts, [&](const std::string& mine) {
    return exchange("tcp_addr", mine, req.rank, req.size);
  });
}

// shm among `members` (job ranks, ascending, this rank included; all of the job when
// it runs on one host), named by job rank.
Result<std::unique_ptr<transport::Transport>> create_shm(const TransportRequest& req,
                                                         const Exchange& exchange,
                                                         const std::vector<int>& members) {
  const int local = static_cast<int>(std::find(members.begin(), members.end(), req.rank) -
                                     members.begin());
  const int n = static_cast<int>(members.size());
  const bool whole_job = n == req.size;
  shm::ShmOptions opts;
  opts.rank = local;
  opts.size = n;
  // Each host's group gets its own segment name (hosts emulated on one machine by
  // CHORUS_HOST_ID must not meet in /dev/shm) and its own exchange keys.
  const std::uint64_t first = static_cast<std::uint64_t>(members.front());
  opts.job_token = whole_job ? req.token : req.token ^ ((first + 1) * 0x9e3779b97f4a7c15ull);
  if (!whole_job) {
    opts.rank_names = members;
    opts.job_size = req.size;
    opts.bells = true;  // part of a combined transport, which waits on sockets too
  }
  opts.ring_bytes = req.cfg.buff_bytes;
  opts.single_copy = req.cfg.single_copy;
  opts.setup_deadline = req.deadline;
  opts.describe_sig = op::describe_signature;
  const std::string prefix = whole_job ? "" : str_printf("host%d/", members.front());
  return shm::create_shm_transport(opts, [&](const std::string& key, const std::string& mine) {
    return exchange(prefix + key, mine, local, n);
  });
}

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const Exchange& exchange) {
  const Transport kind = req.cfg.transport;  // checked by config
  if (kind == Transport::kTcp) return create_tcp(req, store, exchange);
  const std::string me = host_identity(req.cfg);
  CHORUS_ASSIGN_OR_RETURN(auto hosts, exchange("host", me, req.rank, req.size));
  std::vector<int> local;  // the job ranks on this host, ascending
  for (int r = 0; r < req.size; ++r)
    if (hosts[r] == me) local.push_back(r);
  if (static_cast<int>(local.size()) == req.size) return create_shm(req, exchange, local);
  const int other = static_cast<int>(
      std::find_if(hosts.begin(), hosts.end(), [&](const std::string& h) { return h != me; }) -
      hosts.begin());
  if (kind == Transport::kShm)
    return invalid_argument(str_printf(
        "CHORUS_TRANSPORT=shm needs every rank on one host, but rank %d is on '%s' and rank "
        "%d on '%s'", other, hosts[other].c_str(), req.rank, me.c_str()));
  // Every rank takes part in the TCP set-up; then the ranks of each host with company
  // set up their shared memory among themselves (keys per host).
  CHORUS_ASSIGN_OR_RETURN(auto far, create_tcp(req, store, exchange));
  std::unique_ptr<transport::Transport> near;
  if (local.size() > 1) {
    CHORUS_ASSIGN_OR_RETURN(near, create_shm(req, exchange, local));
    CHORUS_LOG(INFO, Init, "rank %d: ranks span hosts: shm among the %zu ranks on '%s', tcp to "
               "the others", req.rank, local.size(), me.c_str());
  } else {
    CHORUS_LOG(INFO, Init, "rank %d: ranks span hosts and none shares '%s': using tcp",
               req.rank, me.c_str());
  }
  // Hosts numbered in order of their lowest rank (the same on every rank).
  std::vector<int> host_index(static_cast<std::size_t>(req.size), -1);
  int next_host = 0;
  for (int r = 0; r < req.size; ++r) {
    if (host_index[r] >= 0) continue;
    for (int q = r; q < req.size; ++q)
      if (hosts[q] == hosts[r]) host_index[q] = next_host;
    ++next_host;
  }
  return std::unique_ptr<transport::Transport>(std::make_unique<transport::RoutedTransport>(
      std::move(near), std::move(local), std::move(far), std::move(host_index)));
}

Result<void*> alloc_host_shared(std::size_t bytes) {
  return shm::MemRegistry::instance().alloc(bytes);
}

Status free_host_shared(void* ptr) { return shm::MemRegistry::instance().free(ptr); }

}  // namespace chorus::core
