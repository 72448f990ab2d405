// Which of a communicator's streams a public Stream names.
#pragma once
#include "chorus/stream.h"
#include "core/comm.h"

namespace chorus::api {

// The stream's id in `impl`; throws kInvalidArgument naming "stream" when it belongs to
// another communicator or names no stream of this one.
int stream_id(const core::Comm& impl, const Stream& stream);

}  // namespace chorus::api
