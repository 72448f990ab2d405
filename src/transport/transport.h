// The transport interface: how algorithms move bytes between ranks. Knows nothing of
// collectives. Messages are matched by (peer, tag); different tags never mix, so
// concurrent operations and ranks running ahead are safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "util/deadline.h"
#include "util/status.h"

namespace chorus::transport {

// Identity of one message: communicator, operation sequence number, step within the op.
struct Tag {
  std::uint32_t comm = 0;
  std::uint64_t seq = 0;
  std::uint32_t step = 0;
  bool operator==(const Tag&) const = default;
};

// A posted send or receive. Destroying a request that has not completed cancels it:
// the transport never touches its buffer afterwards.
class Request {
 public:
  virtual ~Request() = default;
  // True once the request has finished (successfully or not). Does not make progress.
  virtual bool done() const = 0;
  // The outcome; OK while pending or after success.
  virtual Status status() const = 0;
};
using RequestPtr = std::unique_ptr<Request>;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Sends `bytes` bytes at `data` to `peer` under `tag`. The buffer must stay valid and
  // unchanged until the request completes. A send to self is not allowed.
  virtual Result<RequestPtr> post_send(int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  // Receives the message from `peer` with `tag` into `data`. The message must be exactly
  // `bytes` long: a different length fails the request with kDesync.
  virtual Result<RequestPtr> post_recv(int peer, Tag tag, void* data, std::size_t bytes) = 0;

  // Makes progress until every request in `reqs` is done or `deadline` passes.
  // Null entries are skipped. Returns the first failure (kPeerLost, kTimeout with the
  // peer of a pending request, kDesync, kAborted, kIo), else OK. Several threads may
  // wait at once.
  virtual Status wait(std::span<Request* const> reqs, Deadline deadline) = 0;

  // Fails every pending and future request with `reason` (kAborted). Never blocks;
  // callable from any thread.
  virtual void abort(const Status& reason) = 0;
};

// Convenience: wait for one request.
inline Status wait_one(Transport& t, Request* r, Deadline d) {
  Request* reqs[1] = {r};
  return t.wait(std::span<Request* const>(reqs, 1), d);
}

// Blocking helpers built on post + wait.
Status send(Transport& t, int peer, Tag tag, const void* data, std::size_t bytes, Deadline d);
Status recv(Transport& t, int peer, Tag tag, void* data, std::size_t bytes, Deadline d);
// Sends to `to` and receives from `from` at the same time (no send-send deadlock).
Status send_recv(Transport& t, int to, Tag send_tag, const void* send_data, std::size_t send_bytes,
                 int from, Tag recv_tag, void* recv_data, std::size_t recv_bytes, Deadline d);

}  // namespace chorus::transport
