// CommImpl: one communicator's state (rank, size, transport, store, op sequence) and
// the path of every collective from validated arguments to an algorithm.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "algo/algorithm.h"
#include "algo/selector.h"
#include "bootstrap/store.h"
#include "transport/transport.h"
#include "util/status.h"

namespace chorus::core {

// Resolved per-communicator settings (options merged over CHORUS_* config).
struct CommConfig {
  std::chrono::milliseconds timeout{300000};
  std::chrono::milliseconds connect_timeout{60000};
  std::string algo;              // CHORUS_ALGO syntax
  std::size_t chunk_bytes = 1 << 20;
  std::size_t small_bytes = 64 << 10;
  std::size_t eager_bytes = 64 << 10;
  std::size_t socket_buffer_bytes = 4 << 20;
  std::string socket_addr;       // "" = derive from the store connection
  std::string transport = "tcp";
};

class CommImpl {
 public:
  // Rendezvous through `store` (keys under "comm<id>/"), connect the transport.
  // `keepalive` is held for the communicator's lifetime (e.g. a store server).
  static Result<std::unique_ptr<CommImpl>> create(int rank, int size,
                                                  std::shared_ptr<bootstrap::Store> store,
                                                  const CommConfig& cfg,
                                                  std::shared_ptr<void> keepalive = nullptr);
  ~CommImpl();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs one collective: stamps comm id, seq and deadline into `args`, picks the
  // algorithm, runs it on this thread. Errors carry the collective's name and seq.
  Status run(algo::CollKind kind, algo::CollArgs args);
  // Point-to-point; ordered per (sender, receiver) pair.
  Status send(const void* buf, std::size_t bytes, int peer);
  Status recv(void* buf, std::size_t bytes, int peer);

 private:
  CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector);

  int rank_;
  int size_;
  CommConfig cfg_;
  algo::Selector selector_;
  std::uint32_t comm_id_ = 0;
  std::uint64_t next_seq_ = 0;
  std::vector<std::uint64_t> send_seq_;  // per peer, point-to-point
  std::vector<std::uint64_t> recv_seq_;
  Status failed_;  // sticky: first communication error
  std::shared_ptr<bootstrap::Store> store_;
  std::unique_ptr<transport::Transport> transport_;
  std::shared_ptr<void> keepalive_;
};

}  // namespace chorus::core
