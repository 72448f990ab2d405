// Hello validation for mesh set-up (see handshake.h).
#include "transport/tcp/handshake.h"

#include "util/strings.h"

namespace chorus::tcp {

Result<int> check_hello(const FrameHeader& h, std::uint64_t job_token, int rank, int size) {
  CHORUS_RETURN_IF_ERROR(validate_frame(h, job_token, 0));
  if (h.kind != FrameKind::kHello)
    return Status(ErrorCode::kIo, str_printf("expected hello, got %s", frame_kind_name(h.kind)));
  if (size < 1 || rank < 0 || rank >= size)
    return Status(ErrorCode::kIo, str_printf("local rank %d / size %d out of range", rank, size));
  if (h.tag.seq != static_cast<std::uint64_t>(size))
    return Status(ErrorCode::kIo, str_printf("world size %llu differs from ours (%d)",
                                             static_cast<unsigned long long>(h.tag.seq), size));
  if (h.arg <= static_cast<std::uint64_t>(rank) || h.arg >= static_cast<std::uint64_t>(size))
    return Status(ErrorCode::kIo, str_printf("rank %llu is not a higher rank of this world",
                                             static_cast<unsigned long long>(h.arg)));
  return static_cast<int>(h.arg);
}

Result<int> check_hello_bytes(const std::uint8_t* bytes, std::uint64_t job_token, int rank, int size) {
  return check_hello(decode_frame(bytes), job_token, rank, size);
}

}  // namespace chorus::tcp
