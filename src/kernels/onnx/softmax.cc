// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1)
// and the op runs over the whole trailing block; from 13 it runs over the single axis (default -1).
#include <cmath>
#include <vector>

#include "kernels/onnx/axis.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

// Writes the op's result for the n values in v (numerically stable: the maximum is subtracted first).
template <Kind K, typename C>
void normalize_row(std::vector<C>& v) {
  const size_t n = v.size();
  if constexpr (K == Kind::kHardmax) {
    size_t best = 0;  // first maximum; a NaN counts as the maximum, like numpy.argmax
    for (size_t j = 1; j < n && !std::isnan(v[best]); ++j)
      if (v[j] > v[best] || std::isnan(v[j])) best = j;
    for (size_t j = 0; j < n; ++j) v[j] = j == best ? C(1) : C(0);
  } else {
    C m = v[0];
    for (size_t j = 1; j < n; ++j) m = v[j] > m ? v[j] : m;
    C sum = 0;
    if constexpr (K == Kind::kSoftmax) {
      for (size_t j = 0; j < n; ++j) sum += (v[j] = std::exp(v[j] - m));
      for (size_t j = 0; j < n; ++j) v[j] /= sum;
    } else {
      for (size_t j = 0; j < n; ++j) sum += std::exp(v[j] -= m);
      const C log_sum = std::log(sum);
      for (size_t j = 0; j < n; ++j) v[j] -= log_sum;
    }
  }
}

template <Kind K>
Status softmax_family(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const Dims& dims = x->dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const bool single_axis = ctx.op_version() >= 13;
  const int64_t axis_attr = ctx.attr_int("axis", single_axis ? -1 : 1);
  int64_t axis = rank;
  // The 2-D coercion also accepts axis == rank (an empty trailing block of size 1).
  const bool coerce_to_end = !single_axis && axis_attr == rank;
  if (!coerce_to_end && !normalize_axis(axis_attr, rank, &axis))
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for an input of rank {}", axis_attr, rank);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= dims[static_cast<size_t>(d)];
    else if (d == axis || !single_axis) n *= dims[static_cast<size_t>(d)];
    else inner *= dims[static_cast<size_t>(d)];
  }
  Tensor out(x->dtype(), dims);
  QONNX_RETURN_IF_ERROR(visit_types<kFloats>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (n == 0) return;
    const T* in = x->data<T>();
    T* o = out.data<T>();
    std::vector<Compute<T>> row(static_cast<size_t>(n));
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = b * n * inner + i;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = load(in[base + j * inner]);
        normalize_row<K>(row);
        for (int64_t j = 0; j < n; ++j) o[base + j * inner] = store<T>(row[static_cast<size_t>(j)]);
      }
    }
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_softmax_kernels(exec::KernelRegistry& r) {
  r.add("", "Softmax", 1, softmax_family<Kind::kSoftmax>);
  r.add("", "Softmax", 13, softmax_family<Kind::kSoftmax>);
  r.add("", "LogSoftmax", 1, softmax_family<Kind::kLogSoftmax>);
  r.add("", "LogSoftmax", 13, softmax_family<Kind::kLogSoftmax>);
  r.add("", "Hardmax", 1, softmax_family<Kind::kHardmax>);
  r.add("", "Hardmax", 13, softmax_family<Kind::kHardmax>);
}

}  // namespace qonnx::kernels
