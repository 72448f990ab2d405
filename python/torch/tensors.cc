// Tensor checks and conversions shared by the backend's operations (see tensors.h).
#include "tensors.h"

namespace chorus::torch_backend {

namespace {
constexpr const char* kSupported = "float32, float64, float16, bfloat16, int8, uint8, int32, int64";
}  // namespace

chorus::DataType to_dtype(const at::Tensor& t, const char* what) {
  switch (t.scalar_type()) {
    case at::kFloat: return DataType::kFloat32;
    case at::kDouble: return DataType::kFloat64;
    case at::kHalf: return DataType::kFloat16;
    case at::kBFloat16: return DataType::kBfloat16;
    case at::kChar: return DataType::kInt8;
    case at::kByte: return DataType::kUint8;
    case at::kInt: return DataType::kInt32;
    case at::kLong: return DataType::kInt64;
    default:
      TORCH_CHECK(false, "chorus backend: ", what, " has dtype ", t.scalar_type(),
                  ", which Chorus does not support (supported: ", kSupported, ")");
  }
}

// A tensor Chorus reads or writes: CPU, dense, a supported dtype and (when Chorus uses
// its memory directly) contiguous.
void check_tensor(const at::Tensor& t, const char* what, bool direct) {
  TORCH_CHECK(t.defined(), "chorus backend: ", what, " is an undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "chorus backend: ", what, " is on device ", t.device(),
              "; only CPU tensors are supported");
  TORCH_CHECK(t.layout() == at::kStrided, "chorus backend: ", what,
              " is not a dense (strided) tensor");
  TORCH_CHECK(!direct || t.is_contiguous(), "chorus backend: ", what,
              " is not contiguous; pass tensor.contiguous()");
  to_dtype(t, what);
}

at::Tensor& single(std::vector<at::Tensor>& v, const char* what) {
  TORCH_CHECK(v.size() == 1, "chorus backend: expected exactly one tensor in ", what,
              " (one per device, CPU only), got ", v.size());
  check_tensor(v[0], what);
  return v[0];
}

void check_same(const at::Tensor& a, const at::Tensor& b, const char* what) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "chorus backend: ", what, " has dtype ",
              b.scalar_type(), " but the input has ", a.scalar_type());
}

// A list of `n` tensors of `numel` elements each, of `like`'s dtype.
void check_list(const std::vector<at::Tensor>& list, int n, int64_t numel, const at::Tensor& like,
                const char* what) {
  TORCH_CHECK(static_cast<int>(list.size()) == n, "chorus backend: ", what, " must hold ", n,
              " tensors (one per rank), got ", list.size());
  for (const auto& t : list) {
    check_tensor(t, what, /*direct=*/false);
    check_same(like, t, what);
    TORCH_CHECK(t.numel() == numel, "chorus backend: every tensor of ", what, " must have ",
                numel, " elements, got ", t.numel());
  }
}

chorus::ReduceOp to_op(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return chorus::ReduceOp::kSum;
    case c10d::ReduceOp::AVG: return chorus::ReduceOp::kAvg;
    case c10d::ReduceOp::PRODUCT: return chorus::ReduceOp::kProd;
    case c10d::ReduceOp::MIN: return chorus::ReduceOp::kMin;
    case c10d::ReduceOp::MAX: return chorus::ReduceOp::kMax;
    default:
      TORCH_CHECK(false, "chorus backend: ReduceOp ", static_cast<int>(op.op_),
                  " (BAND, BOR, BXOR or PREMUL_SUM) is not supported; use SUM, AVG, PRODUCT, "
                  "MIN or MAX");
  }
}

// The concatenation of `list`, flattened, as one contiguous tensor.
at::Tensor flat_cat(const std::vector<at::Tensor>& list) {
  std::vector<at::Tensor> flat;
  flat.reserve(list.size());
  for (const auto& t : list) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive pieces of `flat` into the tensors of `list`.
void scatter_copy(const at::Tensor& flat, std::vector<at::Tensor>& list) {
  int64_t off = 0;
  for (auto& t : list) {
    t.copy_(flat.narrow(0, off, t.numel()).view(t.sizes()));
    off += t.numel();
  }
}


}  // namespace chorus::torch_backend
