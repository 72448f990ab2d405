// Validation of the hello frame a connecting rank sends during mesh set-up (docs/WIRE.md),
// kept apart from the socket code so that it can be unit-tested and fuzzed on bytes alone.
#pragma once
#include <cstdint>

#include "transport/tcp/frame.h"
#include "util/status.h"

namespace chorus::tcp {

// Checks a decoded hello received by rank `rank` of a world of `size`: a valid frame of
// this job (validate_frame), kind hello, the same world size, and a sender rank above
// `rank` (only higher ranks connect). Returns the sender's rank, or kIo naming the first
// violation. Duplicates are the caller's business.
Result<int> check_hello(const FrameHeader& h, std::uint64_t job_token, int rank, int size);

// Same, on the kFrameHeaderBytes raw bytes of the header.
Result<int> check_hello_bytes(const std::uint8_t* bytes, std::uint64_t job_token, int rank, int size);

}  // namespace chorus::tcp
