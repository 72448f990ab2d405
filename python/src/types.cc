// chorus.DataType, chorus.ReduceOp, chorus.ErrorCode and chorus.Compression, and the
// argument conversions that accept either an enum value or its name.
#include "types.h"

#include <cmath>
#include <string>

#include "bindings.h"
#include "chorus/status.h"
#include "errors.h"

namespace chorus::python {

namespace {

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

}  // namespace

ReduceOp to_reduce_op(py::handle obj, const char* arg) {
  if (py::isinstance<ReduceOp>(obj)) return obj.cast<ReduceOp>();
  if (py::isinstance<py::str>(obj)) {
    const std::string name = obj.cast<std::string>();
    if (auto op = parse_reduce_op(name)) return *op;
    throw_invalid(std::string(arg) + "='" + name +
                  "' is not a reduction (expected sum, prod, min, max or avg)");
  }
  throw_invalid(std::string(arg) + " must be a chorus.ReduceOp or its name, got " + type_name(obj));
}

std::optional<DataType> to_dtype(py::handle obj, const char* arg) {
  if (obj.is_none()) return std::nullopt;
  if (py::isinstance<DataType>(obj)) return obj.cast<DataType>();
  if (py::isinstance<py::str>(obj)) {
    const std::string name = obj.cast<std::string>();
    if (auto t = parse_dtype(name)) return *t;
    throw_invalid(std::string(arg) + "='" + name + "' is not a chorus data type");
  }
  throw_invalid(std::string(arg) + " must be a chorus.DataType or its name, got " + type_name(obj));
}

Compression to_compression(py::handle obj, const char* arg) {
  if (py::isinstance<Compression>(obj)) return obj.cast<Compression>();
  if (py::isinstance<py::str>(obj)) {
    const std::string name = obj.cast<std::string>();
    if (name == "none") return Compression::kNone;
    if (name == "fp16" || name == "float16") return Compression::kFloat16;
    if (name == "bf16" || name == "bfloat16") return Compression::kBfloat16;
    throw_invalid(std::string(arg) + "='" + name +
                  "' is not a compression (expected none, fp16 or bf16)");
  }
  throw_invalid(std::string(arg) + " must be a chorus.Compression or its name, got " +
                type_name(obj));
}

std::chrono::milliseconds to_millis(py::handle obj, const char* arg,
                                    std::chrono::milliseconds if_none) {
  if (obj.is_none()) return if_none;
  double seconds = 0;
  py::module_ datetime = py::module_::import("datetime");
  if (py::isinstance(obj, datetime.attr("timedelta"))) {
    seconds = obj.attr("total_seconds")().cast<double>();
  } else if (py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj)) {
    seconds = obj.cast<double>();
  } else {
    throw_invalid(std::string(arg) +
                  " must be seconds (int or float) or a datetime.timedelta, got " + type_name(obj));
  }
  if (!(seconds >= 0) || seconds > 1e9)
    throw_invalid(std::string(arg) + "=" + std::string(py::str(obj)) +
                  " is out of range (seconds, >= 0)");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000.0)));
}

double to_seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

void bind_types(py::module_& m) {
  py::enum_<DataType>(m, "DataType", "Element type of a buffer (chorus::DataType).")
      .value("INT8", DataType::kInt8)
      .value("UINT8", DataType::kUint8)
      .value("INT32", DataType::kInt32)
      .value("UINT32", DataType::kUint32)
      .value("INT64", DataType::kInt64)
      .value("UINT64", DataType::kUint64)
      .value("FLOAT16", DataType::kFloat16)
      .value("BFLOAT16", DataType::kBfloat16)
      .value("FLOAT32", DataType::kFloat32)
      .value("FLOAT64", DataType::kFloat64)
      .def_property_readonly("itemsize", [](DataType t) { return dtype_size(t); });
  py::enum_<ReduceOp>(m, "ReduceOp", "Reduction operator (chorus::ReduceOp).")
      .value("SUM", ReduceOp::kSum)
      .value("PROD", ReduceOp::kProd)
      .value("MIN", ReduceOp::kMin)
      .value("MAX", ReduceOp::kMax)
      .value("AVG", ReduceOp::kAvg);
  py::enum_<ErrorCode>(m, "ErrorCode", "Failure kind of a chorus.Error (chorus::ErrorCode).")
      .value("OK", ErrorCode::kOk)
      .value("INVALID_ARGUMENT", ErrorCode::kInvalidArgument)
      .value("TIMEOUT", ErrorCode::kTimeout)
      .value("PEER_LOST", ErrorCode::kPeerLost)
      .value("DESYNC", ErrorCode::kDesync)
      .value("ABORTED", ErrorCode::kAborted)
      .value("IO", ErrorCode::kIo)
      .value("NOT_SUPPORTED", ErrorCode::kNotSupported)
      .value("INTERNAL", ErrorCode::kInternal);
  py::enum_<Compression>(m, "Compression", "Wire compression of float32 Bucketer buckets.")
      .value("NONE", Compression::kNone)
      .value("FP16", Compression::kFloat16)
      .value("BF16", Compression::kBfloat16);
}

}  // namespace chorus::python
