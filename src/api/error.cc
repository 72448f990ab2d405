// chorus::Error; the Status -> exception conversion.
#include "api/error.h"

namespace chorus {

Error::Error(ErrorCode code, std::string message, int peer_rank, std::int64_t seq)
    : code_(code), message_(std::move(message)), peer_rank_(peer_rank), seq_(seq),
      what_(std::string(to_string(code)) + ": " + message_) {}

namespace api {

void throw_if_error(const Status& s) {
  if (!s.is_ok()) throw Error(s.code(), s.message(), s.peer(), s.seq());
}

Status status_from_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    return Status(e.code(), e.message(), e.peer_rank(), e.seq());
  } catch (const std::exception& e) {
    return Status(ErrorCode::kIo, e.what());
  } catch (...) {
    return Status(ErrorCode::kInternal, "unknown exception");
  }
}

}  // namespace api
}  // namespace chorus
