// Status construction and formatting.
#include "util/status.h"

#include <cstring>

namespace chorus {

// Declared in the public chorus/status.h; lives here so every room can name codes.
const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kPeerLost: return "peer_lost";
    case ErrorCode::kDesync: return "desync";
    case ErrorCode::kAborted: return "aborted";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kNotSupported: return "not_supported";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}


Status::Status(ErrorCode code, std::string message, int peer, std::int64_t seq) {
  if (code != ErrorCode::kOk) rep_ = std::make_unique<Rep>(Rep{code, std::move(message), peer, seq});
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::to_string() const {
  if (!rep_) return "ok";
  return std::string(chorus::to_string(rep_->code)) + ": " + rep_->message;
}

Status Status::with_context(const std::string& context) const {
  if (!rep_) return Status();
  return Status(rep_->code, context + ": " + rep_->message, rep_->peer, rep_->seq);
}

Status Status::with_peer(int peer) const {
  if (!rep_) return Status();
  return Status(rep_->code, rep_->message, rep_->peer >= 0 ? rep_->peer : peer, rep_->seq);
}

Status Status::with_seq(std::int64_t seq) const {
  if (!rep_) return Status();
  return Status(rep_->code, rep_->message, rep_->peer, rep_->seq >= 0 ? rep_->seq : seq);
}

Status invalid_argument(const std::string& message) {
  return Status(ErrorCode::kInvalidArgument, message);
}
Status io_error(const std::string& what, int err) {
  return Status(ErrorCode::kIo, what + ": " + std::strerror(err));
}
Status timeout_error(const std::string& message) { return Status(ErrorCode::kTimeout, message); }
Status internal_error(const std::string& message) { return Status(ErrorCode::kInternal, message); }

}  // namespace chorus
