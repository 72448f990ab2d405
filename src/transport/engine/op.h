// The state every medium shares: one posted send or receive (Op), a message held before
// its receive was posted (Unexpected), and what the engine knows of one peer (PeerState).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "transport/transport.h"
#include "util/status.h"

namespace chorus::engine {

// One posted send or receive. Lives inside its Request; the engine holds raw pointers to
// it only while it is pending (every container drops it before completion or cancel).
struct Op {
  enum class Kind : std::uint8_t { kSend, kRecv };
  // Where the pending op is referenced from (so cancel can find it).
  enum class Where : std::uint8_t {
    kNone,       // not referenced (done, cancelled, or not yet posted)
    kPosted,     // recv in PeerState::posted, waiting for a matching message
    kOutQueue,   // send whose payload the medium is writing (or will write)
    kAwaitCts,   // send offered to the receiver (TCP rendezvous), waiting for its answer
    kAwaitData,  // recv that accepted an offer, waiting for the payload
    kReading,    // recv whose payload is being read
  };
  Kind kind = Kind::kSend;
  Where where = Where::kNone;
  int peer = -1;
  transport::Tag tag;
  const std::uint8_t* send_data = nullptr;
  std::uint8_t* recv_data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t id = 0;        // the medium's rendezvous id; 0 when none
  bool announced = false;      // recv announced to the sender before it sent (TCP rtr, id)
  std::atomic<bool> done{false};  // set (release) after `status` is final
  Status status;
};

// A message that arrived before its receive was posted: its payload, or an offer whose
// payload the sender still holds until the receive accepts it (TCP rts; `id` names it).
struct Unexpected {
  transport::Tag tag;
  std::uint64_t length = 0;
  bool offer = false;
  std::uint64_t id = 0;
  std::vector<std::uint8_t> data;
};

// What the engine knows of one peer; each medium extends it with its byte-moving state.
struct PeerState {
  int rank = -1;  // index in the engine
  int name = -1;  // rank number in messages and statuses
  std::string address;
  Status failed;    // sticky; later posts fail with it
  Status desynced;  // it rejected one of our messages: later posts fail with this
  bool is_failed() const { return !failed.is_ok(); }
  std::deque<Op*> posted;
  std::deque<Unexpected> unexpected;
};

}  // namespace chorus::engine
