// The boundary between Status (inside) and chorus::Error (outside).
#pragma once
#include "chorus/status.h"
#include "util/status.h"

namespace chorus::api {

// Throws chorus::Error when `s` is not OK.
void throw_if_error(const Status& s);

// Inside a catch block: the caught exception as a Status (for user-supplied Stores).
Status status_from_current_exception();

// The value of `r`, or throws its error.
template <class T>
T value_or_throw(Result<T> r) {
  if (!r.has_value()) throw_if_error(r.status());
  return std::move(r).value();
}

}  // namespace chorus::api
