// Stream: a named, ordered lane of asynchronous operations on one communicator.
#pragma once
#include <string>

#include "chorus/export.h"

namespace chorus {

// Operations issued on one stream run one after another in issue order; operations on
// different streams of the same communicator may run at the same time (each stream has
// its own worker thread, started on first use). Every rank must issue the operations of
// a communicator in the same program order, whatever their streams; sequence numbers are
// given at issue time, so concurrent streams never mix their messages. Use the
// corresponding stream for an operation on every rank (create streams in the same order
// everywhere): a rank that runs it one after another where its peers run it
// concurrently may wait for them longer, never deadlocks or mixes data.
//
// A default-constructed Stream is the communicator's default stream, on which the
// blocking calls also run (a blocking call first waits for earlier asynchronous work on
// the default stream). A stream belongs to the communicator that created it: passing it
// to another communicator throws kInvalidArgument.
class CHORUS_EXPORT Stream {
 public:
  Stream() = default;

  const std::string& name() const noexcept { return name_; }
  // 0 for the default stream, then 1, 2, ... in creation order.
  int id() const noexcept { return id_; }
  bool is_default() const noexcept { return id_ == 0; }

  Stream(const void* owner, int id, std::string name)
      : owner_(owner), id_(id), name_(std::move(name)) {}
  const void* owner() const noexcept { return owner_; }

 private:
  const void* owner_ = nullptr;  // the communicator's implementation; null = default
  int id_ = 0;
  std::string name_ = "default";
};

}  // namespace chorus
