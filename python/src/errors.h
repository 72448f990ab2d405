// Python exception classes mirroring chorus::ErrorCode, and the raising helpers the
// binding files use for their own argument checks.
#pragma once
#include <string>

#include "chorus/status.h"

namespace chorus::python {

// Throws chorus::Error(kInvalidArgument, message); the translator turns it into
// chorus.InvalidArgumentError, exactly like a check inside the C++ library.
[[noreturn]] void throw_invalid(const std::string& message);

}  // namespace chorus::python
