// TCP store: a server (thread) holding the key-value map, and its client.
#pragma once
#include <memory>
#include <string>

#include "bootstrap/store.h"

namespace chorus::bootstrap {

// Serves the store protocol (docs/STORE.md) on a background thread until destroyed.
class TcpStoreServer {
 public:
  // Binds host:port (port 0 = any); kIo on failure.
  static Result<std::unique_ptr<TcpStoreServer>> start(const std::string& host, int port);
  virtual ~TcpStoreServer() = default;
  virtual int port() const = 0;
};

// Connects to a TcpStoreServer, retrying until `deadline` (the server may start later).
// The returned store is thread-safe.
Result<std::shared_ptr<Store>> connect_tcp_store(const std::string& host, int port,
                                                 Deadline deadline);

// The local IP address of the connection to the store, as seen by this host (the
// address peers can most likely reach us at). "" if not a TCP store.
std::string tcp_store_local_address(const Store& store);

}  // namespace chorus::bootstrap
