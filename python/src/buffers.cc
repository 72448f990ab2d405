// Acquiring and checking buffer-protocol arguments; element types from struct formats.
#include "buffers.h"

#include <bit>
#include <cstring>

#include "errors.h"

namespace chorus::python {

namespace {

enum class Kind { kSigned, kUnsigned, kFloat, kOther };

Kind kind_of(char c) {
  if (c == '\0') return Kind::kOther;
  if (std::strchr("bhilqn", c) != nullptr) return Kind::kSigned;
  if (std::strchr("BHILQN", c) != nullptr) return Kind::kUnsigned;
  if (std::strchr("efd", c) != nullptr) return Kind::kFloat;
  return Kind::kOther;
}

// Fills `inferred` and `name` from a struct-module format and item size.
void describe(const char* format, std::size_t itemsize, std::optional<DataType>* inferred,
              std::string* name) {
  const char* f = format ? format : "B";
  char order = '@';
  if (*f != '\0' && std::strchr("@=<>!", *f) != nullptr) order = *f++;
  const bool little_host = std::endian::native == std::endian::little;
  const bool native = order == '@' || order == '=' || (order == '<' && little_host) ||
                      ((order == '>' || order == '!') && !little_host);
  const Kind kind = (std::strlen(f) == 1) ? kind_of(*f) : Kind::kOther;
  const std::string bits = std::to_string(itemsize * 8);
  switch (kind) {
    case Kind::kSigned:
      *name = "int" + bits;
      break;
    case Kind::kUnsigned:
      *name = "uint" + bits;
      break;
    case Kind::kFloat:
      *name = "float" + bits;
      break;
    case Kind::kOther:
      *name = std::string("format '") + (format ? format : "B") + "'";
      break;
  }
  if (!native) {
    *name += " (non-native byte order)";
    return;
  }
  if (kind == Kind::kSigned && itemsize == 1) *inferred = DataType::kInt8;
  if (kind == Kind::kSigned && itemsize == 4) *inferred = DataType::kInt32;
  if (kind == Kind::kSigned && itemsize == 8) *inferred = DataType::kInt64;
  if (kind == Kind::kUnsigned && itemsize == 1) *inferred = DataType::kUint8;
  if (kind == Kind::kUnsigned && itemsize == 4) *inferred = DataType::kUint32;
  if (kind == Kind::kUnsigned && itemsize == 8) *inferred = DataType::kUint64;
  if (kind == Kind::kFloat && itemsize == 2) *inferred = DataType::kFloat16;
  if (kind == Kind::kFloat && itemsize == 4) *inferred = DataType::kFloat32;
  if (kind == Kind::kFloat && itemsize == 8) *inferred = DataType::kFloat64;
}

std::string type_of(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

}  // namespace

View::View(py::handle obj, const char* arg, bool writable) : arg_(arg) {
  if (obj.is_none()) throw_invalid(std::string(arg) + " is None but a buffer is needed here");
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw_invalid(std::string(arg) + " must be a numpy array or a buffer-protocol object, got " +
                  type_of(obj));
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_RECORDS_RO) != 0) {
    py::error_already_set e;
    throw_invalid(std::string(arg) + ": cannot read its buffer (" + e.what() + ")");
  }
  held_ = true;
  if (!PyBuffer_IsContiguous(&view_, 'C'))
    throw_invalid(std::string(arg) +
                  " is not C-contiguous (Chorus reads and writes buffers as one block; pass "
                  "numpy.ascontiguousarray(...) and copy results back)");
  if (writable && view_.readonly)
    throw_invalid(std::string(arg) + " is read-only, but the operation writes into it");
  if (view_.itemsize <= 0)
    throw_invalid(std::string(arg) + " has an item size of " + std::to_string(view_.itemsize));
  describe(view_.format, itemsize(), &inferred_, &type_name_);
}

View::View(View&& other) noexcept
    : view_(other.view_),
      held_(other.held_),
      arg_(other.arg_),
      inferred_(other.inferred_),
      type_name_(std::move(other.type_name_)) {
  other.held_ = false;
}

View::~View() {
  if (held_) PyBuffer_Release(&view_);
}

DataType resolve_dtype(std::optional<DataType> explicit_dtype,
                       std::initializer_list<const View*> views) {
  if (explicit_dtype) {
    if (!is_valid(*explicit_dtype)) throw_invalid("dtype is not a chorus.DataType");
    const std::size_t size = dtype_size(*explicit_dtype);
    for (const View* v : views) {
      if (v != nullptr && v->itemsize() != size)
        throw_invalid(std::string(v->arg()) + " has " + std::to_string(v->itemsize()) +
                      "-byte elements (" + v->type_name() +
                      "), but dtype=" + to_string(*explicit_dtype) + " needs " +
                      std::to_string(size) + "-byte elements");
    }
    return *explicit_dtype;
  }
  const View* first = nullptr;
  for (const View* v : views) {
    if (v == nullptr) continue;
    if (!v->inferred()) {
      std::string hint;
      if (v->itemsize() == 2 && v->type_name().rfind("uint16", 0) == 0)
        hint = "; for bfloat16 data stored as uint16 pass dtype='bfloat16'";
      throw_invalid(std::string(v->arg()) + " holds " + v->type_name() +
                    ", which Chorus does not support (int8, uint8, int32, uint32, int64, uint64, "
                    "float16, float32, float64; bfloat16 through dtype=)" +
                    hint);
    }
    if (first == nullptr) {
      first = v;
    } else if (*v->inferred() != *first->inferred()) {
      throw_invalid(std::string(v->arg()) + " holds " + v->type_name() + " but " + first->arg() +
                    " holds " + first->type_name() + " (the dtypes must match)");
    }
  }
  if (first == nullptr) throw_invalid("no buffer given to infer the dtype from");
  return *first->inferred();
}

void check_count(const View& v, std::size_t expected, const char* what) {
  if (v.count() != expected)
    throw_invalid(std::string(v.arg()) + " has " + std::to_string(v.count()) +
                  " elements, expected " + std::to_string(expected) + " (" + what + ")");
}

bool overlaps(const View& a, const View& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto* a0 = static_cast<const char*>(a.data());
  const auto* b0 = static_cast<const char*>(b.data());
  return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

}  // namespace chorus::python
