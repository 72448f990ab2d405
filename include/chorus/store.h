// Key-value rendezvous store used by ranks to find each other.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chorus/export.h"

namespace chorus {

// A store shared by all ranks of a job. Keys are strings, values are bytes.
// Implementations must be safe to call from several threads at once.
// Every call throws chorus::Error (kTimeout when a deadline passes, kIo on I/O
// failure). Users may implement their own (e.g. over another framework's store).
class CHORUS_EXPORT Store {
 public:
  virtual ~Store();
  // Stores `value` under `key`, replacing any previous value.
  virtual void set(const std::string& key, const std::vector<std::uint8_t>& value) = 0;
  // Returns the value of `key`, waiting up to `timeout` for it to be set.
  virtual std::vector<std::uint8_t> get(const std::string& key,
                                        std::chrono::milliseconds timeout) = 0;
  // Atomically adds `delta` to the integer counter `key` (created as 0) and returns
  // the new value.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // Waits up to `timeout` until every key in `keys` is set.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // True when `key` is set now (no waiting).
  virtual bool check(const std::string& key) = 0;
};

// Client of a TCP store server (see TcpStoreServer), connecting within `timeout`.
CHORUS_EXPORT std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port,
                                                       std::chrono::milliseconds timeout);
// A store kept as files in `directory`, which every rank must see (local disk for
// one host, a shared file system for several). The directory is created if needed.
CHORUS_EXPORT std::shared_ptr<Store> open_file_store(const std::string& directory);

// A TCP store server running on a background thread until destroyed.
class CHORUS_EXPORT TcpStoreServer {
 public:
  // Listens on `host`:`port` (port 0 = any free port). Throws kIo on failure.
  static std::unique_ptr<TcpStoreServer> start(const std::string& host = "0.0.0.0", int port = 0);
  virtual ~TcpStoreServer();
  // The port actually bound.
  virtual int port() const = 0;
};

}  // namespace chorus
