// The only place that names concrete transports: builds the transport a CommConfig asks for.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <memory>

#include "bootstrap/store.h"
#include "core/comm_impl.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus::core {

struct TransportRequest {
  int rank;
  int size;
  std::uint64_t token;
  const CommConfig& cfg;
  Deadline deadline;
};

// All-gathers one string per rank under `key` (index = rank) through the store; each key
// may be used once per communicator.
using Exchange = std::function<Result<std::vector<std::string>>(const std::string& key,
                                                                const std::string& mine)>;

// Picks shm when every rank is on this host (CHORUS_TRANSPORT=auto or shm), else TCP.
// kInvalidArgument naming CHORUS_TRANSPORT for an unknown transport, or for shm when the
// ranks span hosts.
Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const Exchange& exchange);

}  // namespace chorus::core
