// Builds concrete transports (today: TCP) for a communicator.
#include "core/factory.h"

#include "algo/signature.h"
#include "bootstrap/tcp_store.h"
#include "util/strings.h"

namespace chorus::core {

Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const Exchange& exchange) {
  if (req.cfg.transport != "tcp" && req.cfg.transport != "auto")
    return invalid_argument(str_printf("CHORUS_TRANSPORT='%s' is not a transport (known: tcp)",
                                       req.cfg.transport.c_str()));
  tcp::TcpOptions opts;
  opts.rank = req.rank;
  opts.size = req.size;
  opts.job_token = req.token;
  opts.listen_host = req.cfg.socket_addr;
  if (opts.listen_host.empty()) opts.listen_host = bootstrap::tcp_store_local_address(store);
  if (opts.listen_host.empty()) opts.listen_host = "127.0.0.1";
  opts.eager_bytes = req.cfg.eager_bytes;
  opts.socket_buffer_bytes = req.cfg.socket_buffer_bytes;
  opts.connect_deadline = req.deadline;
  opts.describe_sig = algo::describe_signature;
  return tcp::create_tcp_transport(
      opts, [&](const std::string& mine) { return exchange("tcp_addr", mine); });
}

}  // namespace chorus::core
