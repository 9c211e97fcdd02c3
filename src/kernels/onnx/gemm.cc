// Gemm: Y = alpha * A' x B' + beta * C, with A' / B' optionally transposed and C broadcast
// (unidirectionally) to the output. C is optional (required before opset 11; accepted missing anyway).
// Before opset 7 C broadcasts only with the `broadcast` attribute set; from 7 whenever its shape allows.
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/gemm_core.h"
#include "kernels/common/transpose.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

// Row-major copy of the transpose of a rows x cols matrix (the kernels' blocked transpose).
template <typename T>
std::vector<T> transposed(const T* src, int64_t rows, int64_t cols) {
  std::vector<T> out(static_cast<size_t>(rows * cols));
  transpose_inner(src, out.data(), 1, rows, cols, sizeof(T));
  return out;
}

template <typename T>
void run_gemm(const T* a, const T* b, const T* c, const Dims& c_dims, bool trans_a, bool trans_b, float alpha,
              float beta, int64_t m, int64_t k, int64_t n, T* y) {
  if (beta == 0.0f) c = nullptr;  // as onnxruntime: C is not read, so an infinite C gives no NaN
  std::vector<T> at, bt;
  if (trans_a) {
    at = transposed(a, k, m);
    a = at.data();
  }
  if constexpr (std::is_same_v<T, float>) {  // B read in place, or packed a panel at a time
    const FloatRowMajorSource plain(b, n);
    const FloatTransposedSource packed(b, k);
    FloatGemm g;
    g.m = m, g.n = n, g.k = k, g.a = a, g.lda = k, g.c = y, g.ldc = n;
    g.b = trans_b ? static_cast<const FloatPanelSource*>(&packed) : &plain;
    float_gemm(g);
  } else if (trans_b) {
    bt = transposed(b, n, k);
    b = bt.data();
  }
  const Dims out_dims = {m, n};
  std::vector<int64_t> c_stride = c ? exec::broadcast_strides(c_dims, out_dims) : std::vector<int64_t>{0, 0};
  auto c_at = [&](int64_t i, int64_t j) { return c[i * c_stride[0] + j * c_stride[1]]; };
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (!std::is_same_v<T, float>) gemm_accumulate<T, T>(m, n, k, a, k, b, n, y, n);
    // As onnxruntime's MLAS kernels (AVX2/AVX-512): alpha * AB fused with the add of beta * C.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const T ab = y[i * n + j];
        y[i * n + j] = c ? std::fma(static_cast<T>(alpha), ab, static_cast<T>(beta) * c_at(i, j)) : static_cast<T>(alpha) * ab;
      }
  } else {
    // Integers accumulate with wrap-around; scaling by non-unit alpha/beta goes through double.
    std::vector<uint64_t> acc(static_cast<size_t>(m * n), 0);
    gemm_accumulate<T, uint64_t>(m, n, k, a, k, b, n, acc.data(), n);
    const bool unit = alpha == 1.0f && beta == 1.0f;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const uint64_t ab = acc[static_cast<size_t>(i * n + j)];
        if (unit) {
          y[i * n + j] = static_cast<T>(ab + (c ? static_cast<uint64_t>(c_at(i, j)) : 0));
        } else {
          double v = alpha * static_cast<double>(static_cast<T>(ab));
          if (c) v += beta * static_cast<double>(c_at(i, j));
          y[i * n + j] = static_cast<T>(v);
        }
      }
  }
}

struct GemmAttrs {
  bool trans_a, trans_b;
  float alpha, beta;
  bool c_broadcasts;  // false: C must have the output's shape (Gemm-1..6 with broadcast=0)
};

template <bool BroadcastAttribute>
Result<GemmAttrs> prepare_gemm(const ir::Node& node, int64_t) {
  GemmAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.trans_a, flag_attr(node, "transA", false));
  QONNX_ASSIGN_OR_RETURN(a.trans_b, flag_attr(node, "transB", false));
  QONNX_ASSIGN_OR_RETURN(a.alpha, float_attr(node, "alpha", 1.0f));
  QONNX_ASSIGN_OR_RETURN(a.beta, float_attr(node, "beta", 1.0f));
  a.c_broadcasts = true;  // from 7 on C always broadcasts
  if (BroadcastAttribute) {
    QONNX_ASSIGN_OR_RETURN(a.c_broadcasts, flag_attr(node, "broadcast", false));
  }
  return a;
}

// The k x n transpose of a plan-time constant float B stored n x k (transB weights), made once per plan
// and read in place by every run (instead of repacking every panel every run). The product reads the
// same values in the same order, so the bits are those of the transposing source.
struct TransposedB {
  int64_t n = 0, k = 0;
  std::vector<float> data;
};

exec::PreparedState prepack_gemm(const void* prepared, const std::vector<const Tensor*>& constants) {
  const auto& attrs = *static_cast<const GemmAttrs*>(prepared);
  const Tensor* b = constants.size() > 1 ? constants[1] : nullptr;
  if (!attrs.trans_b || !b || b->dtype() != DType::kFloat || b->rank() != 2) return nullptr;
  auto packed = std::make_shared<TransposedB>();
  packed->n = b->dim(0), packed->k = b->dim(1);
  packed->data.resize(static_cast<size_t>(packed->n * packed->k));
  transpose_inner(b->data<float>(), packed->data.data(), 1, packed->n, packed->k, sizeof(float));
  return packed;
}

Status gemm(exec::KernelContext& ctx, const GemmAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* a, ctx.required(0, "A"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* b, ctx.required(1, "B"));
  const Tensor* c = ctx.input(2);
  if (a->rank() != 2) return ctx.input_error(Code::kInvalidModel, 0, "must be 2-D, got shape {}", dims_to_string(a->dims()));
  if (b->rank() != 2) return ctx.input_error(Code::kInvalidModel, 1, "must be 2-D, got shape {}", dims_to_string(b->dims()));
  if (b->dtype() != a->dtype())
    return ctx.input_error(Code::kInvalidModel, 1, "type {} differs from A's {}", dtype_name(b->dtype()),
                           dtype_name(a->dtype()));
  if (c && c->dtype() != a->dtype())
    return ctx.input_error(Code::kInvalidModel, 2, "type {} differs from A's {}", dtype_name(c->dtype()),
                           dtype_name(a->dtype()));
  const bool trans_a = attrs.trans_a, trans_b = attrs.trans_b;
  const float alpha = attrs.alpha, beta = attrs.beta;
  const int64_t m = trans_a ? a->dim(1) : a->dim(0), k = trans_a ? a->dim(0) : a->dim(1);
  const int64_t kb = trans_b ? b->dim(1) : b->dim(0), n = trans_b ? b->dim(0) : b->dim(1);
  if (kb != k)
    return ctx.input_error(Code::kInvalidModel, 1, "inner dimension {} does not match A's {} (A {}{}, B {}{})", kb, k,
                           dims_to_string(a->dims()), trans_a ? " transposed" : "", dims_to_string(b->dims()),
                           trans_b ? " transposed" : "");
  const Dims out_dims = {m, n};
  Dims joined;
  if (c && (c->rank() > 2 || !exec::broadcast_dims(out_dims, c->dims(), &joined) || joined != out_dims))
    return ctx.input_error(Code::kInvalidModel, 2, "shape {} does not broadcast to the output {}",
                           dims_to_string(c->dims()), dims_to_string(out_dims));
  if (c && !attrs.c_broadcasts && c->dims() != out_dims)
    return ctx.input_error(Code::kInvalidModel, 2, "shape {} is not the output's {} (broadcast is 0)",
                           dims_to_string(c->dims()), dims_to_string(out_dims));
  if (checked_numel(out_dims) < 0)
    return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(out_dims));
  const DType dt = a->dtype();
  if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
    QONNX_ASSIGN_OR_RETURN(Tensor af, exec::cast_tensor(*a, DType::kFloat));
    QONNX_ASSIGN_OR_RETURN(Tensor bf, exec::cast_tensor(*b, DType::kFloat));
    Tensor cf;
    if (c) {
      QONNX_ASSIGN_OR_RETURN(cf, exec::cast_tensor(*c, DType::kFloat));
    }
    Tensor y(DType::kFloat, out_dims);
    run_gemm<float>(af.data<float>(), bf.data<float>(), c ? cf.data<float>() : nullptr, c ? c->dims() : Dims{},
                    trans_a, trans_b, alpha, beta, m, k, n, y.data<float>());
    QONNX_ASSIGN_OR_RETURN(Tensor out, exec::cast_tensor(y, dt));
    ctx.set_output(0, std::move(out));
    return Status::ok();
  }
  Tensor y(dt, out_dims);
  const auto* packed = static_cast<const TransposedB*>(ctx.prepacked());
  if (dt == DType::kFloat && trans_b && packed && packed->n == n && packed->k == k) {
    run_gemm<float>(a->data<float>(), packed->data.data(), c ? c->data<float>() : nullptr, c ? c->dims() : Dims{},
                    trans_a, false, alpha, beta, m, k, n, y.data<float>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  bool supported = false;
  exec::visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && sizeof(T) >= 4) {
      run_gemm<T>(a->data<T>(), b->data<T>(), c ? c->data<T>() : nullptr, c ? c->dims() : Dims{}, trans_a, trans_b,
                  alpha, beta, m, k, n, y.data<T>());
      supported = true;
    }
  });
  if (!supported) return ctx.error(Code::kUnsupported, "Gemm on {} is not supported", dtype_name(dt));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_gemm_kernels(exec::KernelRegistry& r) {
  // 9, 11 and 13 added types (11 also made C optional, which every version accepts here).
  exec::Kernel before7 = exec::typed_kernel<GemmAttrs, prepare_gemm<true>, gemm>();
  exec::Kernel from7 = exec::typed_kernel<GemmAttrs, prepare_gemm<false>, gemm>();
  before7.prepack = from7.prepack = prepack_gemm;
  r.add("", "Gemm", {1, 6}, before7);
  r.add("", "Gemm", {7, exec::kNoUpperVersion}, from7);
}

}  // namespace qonnx::kernels
