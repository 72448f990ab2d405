// Tensor checks and conversions shared by the backend's operations: every check fails with
// a RuntimeError (TORCH_CHECK) naming the argument ("chorus backend: <what> ...").
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <vector>

#include "chorus/types.h"

namespace chorus::torch_backend {

// Chorus's dtype of `t`; refuses dtypes Chorus does not have.
chorus::DataType to_dtype(const at::Tensor& t, const char* what);
// A tensor Chorus reads or writes: CPU, dense, a supported dtype and (when Chorus uses its
// memory directly, `direct`) contiguous.
void check_tensor(const at::Tensor& t, const char* what, bool direct = true);
// The only tensor of `v` (one per device, CPU only), checked.
at::Tensor& single(std::vector<at::Tensor>& v, const char* what);
// `b` has `a`'s dtype.
void check_same(const at::Tensor& a, const at::Tensor& b, const char* what);
// A list of `n` tensors of `numel` elements each, of `like`'s dtype.
void check_list(const std::vector<at::Tensor>& list, int n, int64_t numel, const at::Tensor& like,
                const char* what);
// SUM, AVG, PRODUCT, MIN, MAX; refuses the others.
chorus::ReduceOp to_op(const c10d::ReduceOp& op);
// The concatenation of `list`, flattened, as one contiguous tensor.
at::Tensor flat_cat(const std::vector<at::Tensor>& list);
// Copies consecutive pieces of `flat` into the tensors of `list`.
void scatter_copy(const at::Tensor& flat, std::vector<at::Tensor>& list);
inline std::size_t count(const at::Tensor& t) { return static_cast<std::size_t>(t.numel()); }

}  // namespace chorus::torch_backend
