// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1)
// and the op runs over the whole trailing block; from 13 it runs over the single axis (default -1).
// float rows compute as onnxruntime does (docs/ort-arithmetic.md).
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/axis.h"
#include "kernels/isa/isa.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"
#include "kernels/onnx/softmax_avx2.h"

namespace qonnx::kernels {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

// Writes the op's result for the n values in v (numerically stable: the maximum is subtracted first).
// float rows (also float16/bfloat16, computed in float) follow onnxruntime's MLAS kernel: the maximum
// starts from the lowest float, e_j = exp(x_j - max) by MLAS's exponential, summed in eight lanes;
// Softmax is e_j * (1 / sum), LogSoftmax (x_j - max) - log(sum). double rows divide by the sum of std::exp.
template <Kind K, typename C>
void normalize_row(std::vector<C>& v) {
  const size_t n = v.size();
  if constexpr (K == Kind::kHardmax) {
    size_t best = 0;  // first maximum; a NaN counts as the maximum, like numpy.argmax
    for (size_t j = 1; j < n && !std::isnan(v[best]); ++j)
      if (v[j] > v[best] || std::isnan(v[j])) best = j;
    for (size_t j = 0; j < n; ++j) v[j] = j == best ? C(1) : C(0);
  } else if constexpr (std::is_same_v<C, float>) {
    const bool simd = isa::current(isa::Family::kFloat) != isa::Isa::kPortable;
    float m = std::numeric_limits<float>::lowest();
    if (simd) m = avx2::row_max_run(v.data(), static_cast<int64_t>(n), m);
    for (size_t j = simd ? n / 8 * 8 : 0; j < n; ++j) m = v[j] > m ? v[j] : m;
    ort::Avx8Sum sum;
    const size_t done =
        simd ? static_cast<size_t>(avx2::softmax_exp_run(v.data(), m, static_cast<int64_t>(n), K == Kind::kLogSoftmax, sum.lane))
             : 0;
    if constexpr (K == Kind::kSoftmax) {
      for (size_t j = done; j < n; ++j) sum.add(static_cast<int64_t>(j), v[j] = ort::mlas_exp_nonpositive(v[j] - m));
      const float scale = 1.0f / sum.total();
      for (size_t j = 0; j < n; ++j) v[j] *= scale;
    } else {
      for (size_t j = done; j < n; ++j) sum.add(static_cast<int64_t>(j), ort::mlas_exp_nonpositive(v[j] -= m));
      const float log_sum = std::log(sum.total());
      for (size_t j = 0; j < n; ++j) v[j] -= log_sum;
    }
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

// Opset 1-12 coerce the input to 2-D at `axis` (default 1); opset 13 runs over one axis (default -1).
struct SoftmaxAttrs {
  bool single_axis;
  int64_t axis;
};

template <bool SingleAxis>
Result<SoftmaxAttrs> prepare_softmax(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t axis, int_attr(node, "axis", SingleAxis ? -1 : 1));
  return SoftmaxAttrs{SingleAxis, axis};
}

template <Kind K>
Status softmax_family(exec::KernelContext& ctx, const SoftmaxAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const Dims& dims = x->dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const bool single_axis = attrs.single_axis;
  const int64_t axis_attr = attrs.axis;
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
  Tensor out = ctx.output_buffer(x->dtype(), dims, {0});  // each row is read whole before it is written
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

template <Kind K>
void add_family(exec::KernelRegistry& r, const char* op) {
  r.add("", op, {1, 12}, exec::typed_kernel<SoftmaxAttrs, prepare_softmax<false>, softmax_family<K>>());
  r.add("", op, {13, exec::kNoUpperVersion}, exec::typed_kernel<SoftmaxAttrs, prepare_softmax<true>, softmax_family<K>>());
}

}  // namespace

void register_softmax_kernels(exec::KernelRegistry& r) {
  add_family<Kind::kSoftmax>(r, "Softmax");
  add_family<Kind::kLogSoftmax>(r, "LogSoftmax");
  add_family<Kind::kHardmax>(r, "Hardmax");
}

}  // namespace qonnx::kernels
