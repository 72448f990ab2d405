// Conversions of Python arguments to chorus enums and durations: op="sum" or
// chorus.ReduceOp.SUM, dtype="bfloat16" or chorus.DataType.BFLOAT16, timeouts in seconds.
#pragma once
#include <pybind11/pybind11.h>

#include <chrono>
#include <optional>

#include "chorus/bucketer.h"
#include "chorus/types.h"

namespace chorus::python {

namespace py = pybind11;

// A chorus.ReduceOp or one of "sum", "prod", "min", "max", "avg".
ReduceOp to_reduce_op(py::handle obj, const char* arg);
// None (nullopt), a chorus.DataType or a name understood by chorus::parse_dtype.
std::optional<DataType> to_dtype(py::handle obj, const char* arg);
// A chorus.Compression or one of "none", "fp16", "bf16".
Compression to_compression(py::handle obj, const char* arg);
// Seconds (int or float) or a datetime.timedelta; negative values raise
// InvalidArgumentError. None gives `if_none`.
std::chrono::milliseconds to_millis(py::handle obj, const char* arg,
                                    std::chrono::milliseconds if_none);
// Milliseconds as float seconds.
double to_seconds(std::chrono::milliseconds ms);

}  // namespace chorus::python
