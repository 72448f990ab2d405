// The `stream=` argument of the *_async calls: None (the default stream) or a
// chorus.Stream from Communicator.create_stream().
#pragma once
#include <pybind11/pybind11.h>

#include "chorus/stream.h"

namespace chorus::python {

chorus::Stream to_stream(pybind11::handle obj);

}  // namespace chorus::python
