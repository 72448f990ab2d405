// Status / Result<T>: the one error currency inside Chorus (exceptions only in src/api).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "chorus/status.h"

namespace chorus {

// OK costs one null pointer. A failure carries a code, a message and optionally the
// peer rank and sequence number it concerns.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message, int peer = -1, std::int64_t seq = -1);
  static Status ok() { return Status(); }

  bool is_ok() const { return rep_ == nullptr; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return rep_ ? rep_->code : ErrorCode::kOk; }
  const std::string& message() const;
  int peer() const { return rep_ ? rep_->peer : -1; }
  std::int64_t seq() const { return rep_ ? rep_->seq : -1; }
  // "<code>: <message>" or "ok".
  std::string to_string() const;
  // Returns a copy whose message is "<context>: <message>" (no-op when OK).
  Status with_context(const std::string& context) const;
  // Returns a copy with peer / seq filled in when they were unset.
  Status with_peer(int peer) const;
  Status with_seq(std::int64_t seq) const;

  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

 private:
  struct Rep {
    ErrorCode code;
    std::string message;
    int peer;
    std::int64_t seq;
  };
  std::unique_ptr<Rep> rep_;
};

// Shorthands: invalid_argument("count", "must be ...") etc.
Status invalid_argument(const std::string& message);
Status io_error(const std::string& what, int err);  // appends strerror(err)
Status timeout_error(const std::string& message);
Status internal_error(const std::string& message);

// A value or a failure Status. Spelled like std::expected so it can be swapped later.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {}   // NOLINT(implicit); must not be OK
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // The failure; OK when a value is held.
  Status status() const { return has_value() ? Status() : std::get<1>(v_); }
  Status take_status() && { return has_value() ? Status() : std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace chorus

#define CHORUS_CONCAT_INNER_(a, b) a##b
#define CHORUS_CONCAT_(a, b) CHORUS_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when `expr` fails.
#define CHORUS_RETURN_IF_ERROR(expr)                   \
  do {                                                 \
    ::chorus::Status chorus_status_ = (expr);          \
    if (!chorus_status_.is_ok()) return chorus_status_; \
  } while (0)

// `lhs` = value of the Result `expr`, or return its Status.
#define CHORUS_ASSIGN_OR_RETURN(lhs, expr) \
  CHORUS_ASSIGN_OR_RETURN_IMPL_(CHORUS_CONCAT_(chorus_result_, __LINE__), lhs, expr)
#define CHORUS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.has_value()) return std::move(tmp).take_status(); \
  lhs = std::move(tmp).value()
