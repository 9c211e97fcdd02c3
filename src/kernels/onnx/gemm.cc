// Gemm: Y = alpha * A' x B' + beta * C, with A' / B' optionally transposed and C broadcast
// (unidirectionally) to the output. C is optional (required before opset 11; accepted missing anyway).
// Before opset 7 C broadcasts only with the `broadcast` attribute set; from 7 whenever its shape allows.
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/common/gemm_core.h"
#include "kernels/common/integer_form.h"
#include "kernels/common/transpose.h"
#include "kernels/onnx/elementwise_common.h"
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
    for_each_with_fma(m, [&](int64_t i) {
      for (int64_t j = 0; j < n; ++j) {
        const T ab = y[i * n + j];
        y[i * n + j] = c ? std::fma(static_cast<T>(alpha), ab, static_cast<T>(beta) * c_at(i, j)) : static_cast<T>(alpha) * ab;
      }
    });
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
  Tensor data;  // n x k floats; a tensor so that it counts against --max-memory
};

// What a Gemm step keeps from plan time: its integer path (docs/arithmetic.md), or a transposed float B.
struct GemmPacked {
  std::optional<IntegerLayer> integer;
  TransposedB transposed;
};

// The integer path: alpha 1, A not transposed, B a 2-D constant with one scale per tensor or per output
// column, and C (beta 1) absent or a constant with one value per tensor or per output column.
std::optional<IntegerLayer> gemm_integer_layer(const exec::PrepackContext& c, const GemmAttrs& attrs) {
  const Tensor* b = c.constant(1);
  const exec::IntegerForm* bf = c.form(1);
  auto note = [&](std::string text) -> std::optional<IntegerLayer> {
    float_path(c, std::move(text));
    return std::nullopt;
  };
  if (c.arithmetic != exec::Arithmetic::kInt || (!c.form(0) && !bf)) return std::nullopt;
  if (!b || !bf) return note("B is not a constant with an integer form (a quantizer's output)");
  const int n_axis = attrs.trans_b ? 0 : 1;
  if (b->rank() != 2 || !(bf->per_tensor() || bf->axis == n_axis))
    return note("B is not 2-D with one scale per tensor or per output column");
  if (attrs.trans_a || attrs.alpha != 1.0f) return note("transA or alpha != 1");
  const auto a = byte_activation(c.form(0));
  if (!a) return note("A has no integer form with one scale and at most 256 values including 0");
  const int64_t n = b->dim(static_cast<size_t>(n_axis)), k = b->dim(static_cast<size_t>(1 - n_axis));
  const ir::Value* c_value = c.node->inputs().size() > 2 ? c.node->inputs()[2] : nullptr;
  Tensor bias;
  if (c_value && attrs.beta != 0.0f) {
    const Tensor* ct = c.constant(2);
    if (!ct || ct->dtype() != DType::kFloat || attrs.beta != 1.0f) return note("C is not a float constant with beta 1");
    if (ct->numel() == 1) {
      bias = Tensor(DType::kFloat, {n});
      std::fill(bias.data<float>(), bias.data<float>() + n, ct->data<float>()[0]);
    } else if (ct->numel() == n && ct->dim(ct->rank() - 1) == n) {
      bias = *ct;
    } else {
      return note("C is not one value per tensor or per output column");
    }
  }
  std::vector<int8_t> values;
  if (!int8_values(*b, *bf, &values)) return note("B's integers do not fit int8");
  std::string why;
  auto layer = make_integer_layer(*a, values, 1, k, n, attrs.trans_b, bf->scales, bias.defined() ? &bias : nullptr, &why);
  if (!layer) return note(why);
  if (c.path_note) *c.path_note = integer_path_note(*layer);
  return layer;
}

exec::PreparedState prepack_gemm(const exec::PrepackContext& context) {
  const auto& attrs = *static_cast<const GemmAttrs*>(context.prepared);
  auto packed = std::make_shared<GemmPacked>();
  packed->integer = gemm_integer_layer(context, attrs);
  if (packed->integer) {
    if (context.captured_inputs) *context.captured_inputs |= uint64_t{1} << 1;  // B lives on as its codes
    if (context.takes_epilogue) *context.takes_epilogue = true;
    declare_stored_codes(context);
    return packed;
  }
  const Tensor* b = context.constant(1);
  if (!attrs.trans_b || !b || b->dtype() != DType::kFloat || b->rank() != 2) return nullptr;
  TransposedB& t = packed->transposed;
  t.n = b->dim(0), t.k = b->dim(1);
  t.data = Tensor::uninitialized(DType::kFloat, {t.k, t.n});
  transpose_inner(b->data<float>(), t.data.data<float>(), 1, t.n, t.k, sizeof(float));
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
  const auto* packed = static_cast<const GemmPacked*>(ctx.prepacked());
  Tensor b_from_codes;
  if (packed && packed->integer && dt == DType::kFloat) {
    Tensor y = ctx.output_buffer(DType::kFloat, out_dims);
    if (matrix_product_run(ctx, *packed->integer, m, k, a->data<float>(), y)) {
      ctx.set_output(0, std::move(y));
      return Status::ok();
    }
    if (!b->raw()) {  // the plan holds B as codes only (a streamed B comes with its values)
      b_from_codes = packed->integer->float_weights(b->dims(), trans_b);
      b = &b_from_codes;
    }
  }
  Tensor y(dt, out_dims);
  if (dt == DType::kFloat && trans_b && packed && packed->transposed.n == n && packed->transposed.k == k) {
    run_gemm<float>(a->data<float>(), packed->transposed.data.data<float>(), c ? c->data<float>() : nullptr, c ? c->dims() : Dims{},
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
