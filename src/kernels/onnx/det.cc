// Det: determinant of each square matrix in the last two dims, by LU decomposition with partial
// pivoting (in double, rounded to the input type).
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

double determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::fabs(a[static_cast<size_t>(r * n + col)]) > std::fabs(a[static_cast<size_t>(pivot * n + col)])) pivot = r;
    const double p = a[static_cast<size_t>(pivot * n + col)];
    if (p == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[static_cast<size_t>(col * n + j)], a[static_cast<size_t>(pivot * n + j)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = a[static_cast<size_t>(r * n + col)] / p;
      for (int64_t j = col + 1; j < n; ++j) a[static_cast<size_t>(r * n + j)] -= f * a[static_cast<size_t>(col * n + j)];
    }
  }
  return det;
}

Status det(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  if (!dtype_is_float(x->dtype()))
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float types)", dtype_name(x->dtype()));
  if (x->rank() < 2 || x->dim(x->rank() - 1) != x->dim(x->rank() - 2))
    return ctx.input_error(Code::kInvalidModel, 0, "must be square matrices (..., M, M), got shape {}",
                           dims_to_string(x->dims()));
  const int64_t n = x->dim(x->rank() - 1);
  const Dims out_dims(x->dims().begin(), x->dims().end() - 2);
  const int64_t count = checked_numel(out_dims);
  QONNX_ASSIGN_OR_RETURN(Tensor xd, exec::cast_tensor(*x, DType::kDouble));
  Tensor y(DType::kDouble, out_dims);
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < count; ++b) {
    const double* src = xd.data<double>() + b * n * n;
    a.assign(src, src + n * n);
    y.data<double>()[b] = determinant(a, n);
  }
  QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, x->dtype()));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_det_kernels(exec::KernelRegistry& r) { r.add("", "Det", {11, exec::kNoUpperVersion}, det); }

}  // namespace qonnx::kernels
