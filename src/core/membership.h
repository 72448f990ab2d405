// Membership: the communicators a communicator makes from its own store: shrink() (the
// survivors, agreed through the store), split() and new_group() (agreed through an
// all_gather on this communicator), each built by derive() under keys nested in this
// one's, with fresh connections and this communicator's configuration.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "core/comm.h"
#include "core/comm_settings.h"
#include "util/status.h"

namespace chorus::core {

class CommImpl;

class Membership {
 public:
  // `comm`: the communicator whose members these are (it owns this part). `store`,
  // `keepalive` and `key_prefix` as given to its create(); `cfg` its configuration.
  Membership(CommImpl& comm, std::shared_ptr<bootstrap::Store> store,
             std::shared_ptr<void> keepalive, std::string key_prefix, CommConfig cfg)
      : comm_(comm), store_(std::move(store)), keepalive_(std::move(keepalive)),
        key_prefix_(std::move(key_prefix)), cfg_(std::move(cfg)) {}

  // Comm::shrink(), split(), new_group() (src/core/shrink.cc, src/core/split.cc).
  Result<std::unique_ptr<Comm>> shrink();
  Result<std::unique_ptr<Comm>> split(int color, int key);
  Result<std::unique_ptr<Comm>> new_group(const std::vector<int>& ranks);

  // The key prefix of the communicator's create() ("" for a world communicator).
  const std::string& key_prefix() const { return key_prefix_; }

 private:
  // A new communicator (rank `new_rank` of `new_size`) from the same store, with the
  // configuration this one was created with (its configured timeout, not a set_timeout()
  // value) and keys nested under "<key_prefix_>chorus/comm<id>/<sub_prefix>/".
  Result<std::unique_ptr<Comm>> derive(int new_rank, int new_size,
                                       const std::string& sub_prefix) const;
  // split()'s work, with `digest` (0, or new_group's list digest) checked equal on all ranks.
  Result<std::unique_ptr<Comm>> split_checked(int color, int key, std::int64_t digest,
                                              const char* label);

  CommImpl& comm_;
  std::shared_ptr<bootstrap::Store> store_;
  std::shared_ptr<void> keepalive_;  // held for the communicator's lifetime
  std::string key_prefix_;           // of create(); derive() nests the new keys under it
  const CommConfig cfg_;             // as created (configured timeout)
  unsigned shrink_attempts_ = 0;
  unsigned splits_ = 0;  // split()/new_group() calls: names each one's keys
};

}  // namespace chorus::core
