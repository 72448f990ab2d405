// The only place that names concrete transports: builds the transport a CommConfig asks for.
#pragma once
#include <cstdint>
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

// kInvalidArgument naming CHORUS_TRANSPORT for an unknown transport.
Result<std::unique_ptr<transport::Transport>> create_transport(const TransportRequest& req,
                                                               const bootstrap::Store& store,
                                                               const tcp::AddressExchange& exchange);

}  // namespace chorus::core
