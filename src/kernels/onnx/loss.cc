// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (training losses, opset 12 on).
//
// Both see their first input as (N, C, D) with D the product of the trailing dims d1..dk (k >= 0)
// and the target/labels as (N, D). The loss of sample (n, d) with class c = target[n][d] is
// -logp[n][c][d] * w[c] (w = 1 without weights); a target equal to ignore_index contributes a loss of
// 0 and a weight of 0. Reductions: 'none' (shape of the target), 'sum', and 'mean' = sum of the losses
// / sum of the weights of the samples not ignored (with no weights, their count; 0/0 is NaN, as in
// ONNX's reference). SoftmaxCrossEntropyLoss takes logp = LogSoftmax(scores) over axis 1 and also
// returns it as its optional second output. Every sum runs in double in a fixed order (deterministic
// for any thread count) and rounds once to the input's type.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"

namespace qonnx::kernels {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  std::optional<int64_t> ignore_index;
  bool bfloat16 = false;  // bfloat16 inputs: SoftmaxCrossEntropyLoss from 13, NegativeLogLikelihoodLoss from 22
};

template <int kBFloat16Since>
Result<LossAttrs> prepare_loss(const ir::Node& node, int64_t version) {
  LossAttrs a;
  QONNX_ASSIGN_OR_RETURN(const std::string reduction, string_attr(node, "reduction", "mean"));
  QONNX_RETURN_IF_ERROR(check_one_of("reduction", reduction, {"none", "sum", "mean"}));
  a.reduction = reduction == "none" ? Reduction::kNone : reduction == "sum" ? Reduction::kSum : Reduction::kMean;
  if (node.has_attr("ignore_index")) {
    QONNX_ASSIGN_OR_RETURN(const int64_t ii, int_attr(node, "ignore_index", 0));
    a.ignore_index = ii;
  }
  a.bfloat16 = version >= kBFloat16Since;
  return a;
}

// The loss's operands after the checks: classes C, trailing size D, targets as int64 (N*D), and the
// weights as double (empty: none).
struct LossShape {
  int64_t n = 0, c = 0, d = 1;
  Dims target_dims;
  std::vector<int64_t> targets;
  std::vector<double> weights;
};

// Checks input #0 (N, C, d1..dk), input #1 (N, d1..dk) of int32/int64 with classes in [0, C) or
// ignore_index, and the optional input #2 (C) of input #0's type.
Result<LossShape> check_operands(const exec::KernelContext& ctx, const LossAttrs& attrs, const char* what_x,
                                 const char* what_t) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, what_x));
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(1, what_t));
  const DType xt = x->dtype();
  if (!(xt == DType::kFloat || xt == DType::kDouble || xt == DType::kFloat16 || (attrs.bfloat16 && xt == DType::kBFloat16)))
    return unsupported_type(ctx, 0, xt);
  if (t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64) return unsupported_type(ctx, 1, t->dtype());
  if (x->rank() < 2)
    return ctx.input_error(Code::kInvalidModel, 0, "must have shape (N, C, d1, ..., dk), got {}", dims_to_string(x->dims()));
  LossShape s;
  s.n = x->dim(0);
  s.c = x->dim(1);
  for (size_t i = 2; i < x->rank(); ++i) s.d *= x->dim(i);
  Dims expected_t{s.n};
  expected_t.insert(expected_t.end(), x->dims().begin() + 2, x->dims().end());
  if (t->dims() != expected_t)
    return ctx.input_error(Code::kInvalidModel, 1, "must have shape {} (input #0's without C), got {}",
                           dims_to_string(expected_t), dims_to_string(t->dims()));
  s.target_dims = t->dims();
  const int64_t count = t->numel();
  s.targets.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = t->dtype() == DType::kInt64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i];
    if (attrs.ignore_index && v == *attrs.ignore_index) {
      s.targets[static_cast<size_t>(i)] = v;
      continue;
    }
    if (v < 0 || v >= s.c)
      return ctx.input_error(Code::kInvalidModel, 1, "class {} at element {} is outside [0, {}){}", v, i, s.c,
                             attrs.ignore_index ? fmt::format(" and is not ignore_index {}", *attrs.ignore_index) : "");
    s.targets[static_cast<size_t>(i)] = v;
  }
  if (const Tensor* w = ctx.input(2)) {
    if (w->dtype() != xt)
      return ctx.input_error(Code::kInvalidModel, 2, "type {} differs from input #0's {}", dtype_name(w->dtype()), dtype_name(xt));
    if (w->rank() != 1 || w->dim(0) != s.c)
      return ctx.input_error(Code::kInvalidModel, 2, "must have shape [{}] (one weight per class), got {}", s.c,
                             dims_to_string(w->dims()));
    s.weights.resize(static_cast<size_t>(s.c));
    for (int64_t i = 0; i < s.c; ++i) s.weights[static_cast<size_t>(i)] = exec::element_as_double(*w, i);
  }
  return s;
}

// The loss of every sample from logp (N*C*D doubles in (N, C, D) order), reduced per attrs, in type `dtype`.
Tensor reduce_loss(const LossShape& s, const LossAttrs& attrs, const std::vector<double>& logp, DType dtype) {
  const size_t count = s.targets.size();
  std::vector<double> loss(count);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t d = 0; d < s.d; ++d) {
      const size_t k = static_cast<size_t>(n * s.d + d);
      const int64_t c = s.targets[k];
      if (attrs.ignore_index && c == *attrs.ignore_index) {
        loss[k] = 0;
        continue;
      }
      const double w = s.weights.empty() ? 1.0 : s.weights[static_cast<size_t>(c)];
      loss[k] = -logp[static_cast<size_t>((n * s.c + c) * s.d + d)] * w;
      loss_sum += loss[k];
      weight_sum += w;
    }
  }
  Tensor out;
  if (attrs.reduction == Reduction::kNone) {
    out = Tensor::uninitialized(dtype, s.target_dims);
    exec::visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_float_storage_v<T>) {
        T* o = out.data<T>();
        for (size_t k = 0; k < count; ++k) o[k] = from_double<T>(loss[k]);
      }
    });
    return out;
  }
  const double value = attrs.reduction == Reduction::kSum ? loss_sum : loss_sum / weight_sum;
  out = Tensor::uninitialized(dtype, {});
  exec::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_storage_v<T>) *out.data<T>() = from_double<T>(value);
  });
  return out;
}

Status negative_log_likelihood_loss(exec::KernelContext& ctx, const LossAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(LossShape s, check_operands(ctx, attrs, "input", "target"));
  const Tensor& x = *ctx.input(0);
  std::vector<double> logp(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) logp[static_cast<size_t>(i)] = exec::element_as_double(x, i);
  ctx.set_output(0, reduce_loss(s, attrs, logp, x.dtype()));
  return Status::ok();
}

Status softmax_cross_entropy_loss(exec::KernelContext& ctx, const LossAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(LossShape s, check_operands(ctx, attrs, "scores", "labels"));
  const Tensor& x = *ctx.input(0);
  // log_softmax over C for every (n, d): (x - max) - log(sum exp(x - max)).
  std::vector<double> logp(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) logp[static_cast<size_t>(i)] = exec::element_as_double(x, i);
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t d = 0; d < s.d; ++d) {
      double* row = logp.data() + n * s.c * s.d + d;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.c; ++c) m = std::isnan(row[c * s.d]) || row[c * s.d] > m ? row[c * s.d] : m;
      double sum = 0;
      for (int64_t c = 0; c < s.c; ++c) sum += std::exp(row[c * s.d] - m);
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < s.c; ++c) row[c * s.d] = (row[c * s.d] - m) - log_sum;
    }
  }
  ctx.set_output(0, reduce_loss(s, attrs, logp, x.dtype()));
  if (ctx.num_outputs() > 1) {
    Tensor lp = Tensor::uninitialized(x.dtype(), x.dims());
    exec::visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_float_storage_v<T>) {
        T* o = lp.data<T>();
        for (size_t i = 0; i < logp.size(); ++i) o[i] = from_double<T>(logp[i]);
      }
    });
    ctx.set_output(1, std::move(lp));
  }
  return Status::ok();
}

}  // namespace

void register_loss_kernels(exec::KernelRegistry& r) {
  // NegativeLogLikelihoodLoss-13 and -22 change the function body and the types (22: bfloat16).
  const auto nll = exec::typed_kernel<LossAttrs, prepare_loss<22>, negative_log_likelihood_loss>();
  r.add("", "NegativeLogLikelihoodLoss", {12, 12}, nll);
  r.add("", "NegativeLogLikelihoodLoss", {13, 21}, nll);
  r.add("", "NegativeLogLikelihoodLoss", {22, exec::kNoUpperVersion}, nll);
  // SoftmaxCrossEntropyLoss-13 adds bfloat16.
  const auto sce = exec::typed_kernel<LossAttrs, prepare_loss<13>, softmax_cross_entropy_loss>();
  r.add("", "SoftmaxCrossEntropyLoss", {12, 12}, sce);
  r.add("", "SoftmaxCrossEntropyLoss", {13, exec::kNoUpperVersion}, sce);
}

}  // namespace qonnx::kernels
