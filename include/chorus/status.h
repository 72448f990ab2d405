// The public error model: every failing call throws chorus::Error carrying an ErrorCode.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "chorus/export.h"

namespace chorus {

// The closed set of failure kinds. Local mistakes (kInvalidArgument) are told apart
// from remote ones (kPeerLost, kDesync) and from the environment (kIo, kTimeout).
enum class ErrorCode : int {
  kOk = 0,               // never thrown; used by status queries
  kInvalidArgument = 1,  // bad argument; the message names it and its value
  kTimeout = 2,          // a deadline passed (CHORUS_TIMEOUT / CHORUS_CONNECT_TIMEOUT)
  kPeerLost = 3,         // a peer closed its connection or its process is gone
  kDesync = 4,           // ranks disagree about the operation (kind, size, order)
  kAborted = 5,          // the communicator was aborted
  kIo = 6,               // a system call failed (socket, file, ...)
  kNotSupported = 7,     // valid request the library does not implement
  kInternal = 8,         // a bug in Chorus; please report it
};

// "ok", "invalid_argument", "timeout", "peer_lost", "desync", "aborted", "io",
// "not_supported", "internal".
CHORUS_EXPORT const char* to_string(ErrorCode code) noexcept;

// The only exception type Chorus throws. what() is "<code>: <message>".
// peer_rank() and seq() are -1 when they do not apply.
class CHORUS_EXPORT Error : public std::exception {
 public:
  Error(ErrorCode code, std::string message, int peer_rank = -1, std::int64_t seq = -1);
  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  int peer_rank() const noexcept { return peer_rank_; }
  std::int64_t seq() const noexcept { return seq_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  ErrorCode code_;
  std::string message_;
  int peer_rank_;
  std::int64_t seq_;
  std::string what_;
};

}  // namespace chorus
