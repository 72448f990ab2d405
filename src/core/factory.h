// The only place that names concrete transports: builds the transport a CommConfig asks for.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <memory>

#include "bootstrap/store.h"
#include "core/comm_settings.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus::core {

struct TransportRequest {
  int rank;
  int size;
  std::uint64_t token;
  const CommConfig& cfg;
  Deadline deadline;
};

// All-gathers one string per rank through the store among the `size` ranks of a group
// (index = `rank` in it: the whole communicator, or the ranks of one host). Each key may
// be used once per communicator and group.
using Exchange = std::function<Result<std::vector<std::string>>(
    const std::string& key, const std::string& mine, int rank, int size)>;

// CHORUS_TRANSPORT=auto: shm when every rank is on this host; when the ranks span hosts,
// shm among the ranks of each host and TCP between hosts ("shm+tcp"; plain TCP for a rank
// alone on its host). tcp / shm force one (shm fails when the ranks span hosts).
// Hosts are told apart by CHORUS_HOST_ID, default hostname + boot id.
// kInvalidArgument naming CHORUS_TRANSPORT for an unknown transport, or for shm when the
// ranks span hosts.
Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const Exchange& exchange);

// Memory the ranks of this host can map (chorus::mem_alloc / mem_free; the shm
// transport's registry, transport/shm/mem_registry.h).
Result<void*> alloc_host_shared(std::size_t bytes);
Status free_host_shared(void* ptr);

}  // namespace chorus::core
