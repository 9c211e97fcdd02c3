// BatchNormalization (inference from opset 6, training mode from opset 14), InstanceNormalization,
// LayerNormalization (opset 17), GroupNormalization (18, 21), MeanVarianceNormalization and LRN.
//
// Arithmetic in the compute type (float32 for float16/bfloat16/float inputs, double for double).
// The formulas are onnxruntime's (docs/ort-arithmetic.md says where its results are bit-identical).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/attr_check.h"
#include "kernels/common/conv_util.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::kernels {
namespace {

// Input i converted to the compute type C (inputs are float types, checked first, so the cast cannot fail).
template <typename C>
std::vector<C> values_as(const Tensor& t) {
  Tensor c = exec::cast_tensor(t, std::is_same_v<C, double> ? DType::kDouble : DType::kFloat).value();
  return std::vector<C>(c.data<C>(), c.data<C>() + c.numel());
}

// A compute-type result buffer turned into a tensor of `dtype` (the input's float type).
template <typename C>
Tensor to_tensor(const std::vector<C>& v, const Dims& dims, DType dtype) {
  Tensor t(std::is_same_v<C, double> ? DType::kDouble : DType::kFloat, dims);
  std::copy(v.begin(), v.end(), t.data<C>());
  return exec::cast_tensor(t, dtype).value();
}

Status require_float(const exec::KernelContext& ctx, size_t i, const Tensor& t) {
  if (!dtype_is_float(t.dtype()))
    return ctx.input_error(Code::kUnsupported, i, "type {} is not supported (float types)", dtype_name(t.dtype()));
  return Status::ok();
}

// Calls run(C{}) with C = double for double inputs, float otherwise.
template <typename F>
Status with_compute_type(DType d, F&& run) {
  if (d == DType::kDouble) return run(double{});
  return run(float{});
}

// The batch's mean and population variance per channel (training mode) as onnxruntime forms them: the
// Eigen sums of the channel's (n, c) planes added in order, divided by the count; then the same for the
// squared deviations from that mean.
template <typename C>
void batch_statistics(const C* xs, int64_t n, int64_t c, int64_t spatial, C* mean, C* var) {
  const C count = static_cast<C>(n * spatial);
  std::fill(mean, mean + c, C(0));
  std::fill(var, var + c, C(0));
  for (int64_t plane = 0; plane < n * c; ++plane) mean[plane % c] += ort::eigen_sum_of(xs + plane * spatial, spatial, plane * spatial);
  for (int64_t ch = 0; ch < c; ++ch) mean[ch] /= count;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const C* xp = xs + plane * spatial;
    const C m = mean[plane % c];
    var[plane % c] += ort::eigen_sum<C>(spatial, 0, [xp, m](int64_t i) { return (xp[i] - m) * (xp[i] - m); });
  }
  for (int64_t ch = 0; ch < c; ++ch) var[ch] /= count;
}

// y = x * a + b per channel (or per (channel, position) for spatial=0), with a = (1 / sqrt(var + eps)) *
// scale (sqrt(1 / (var + eps)) * scale for the batch's own statistics) and b = B - mean * a:
// onnxruntime's folded formula. Reads x and writes y directly.
template <typename C>
void apply_batch_norm(const C* xs, const C* scale, const C* bias, const C* mean, const C* var, C epsilon,
                      int64_t n, int64_t c, int64_t spatial, bool per_position, bool batch_stats, C* ys) {
  const int64_t params = per_position ? c * spatial : c;
  std::vector<C> a(static_cast<size_t>(params)), b(static_cast<size_t>(params));
  for (int64_t p = 0; p < params; ++p) {
    const auto k = static_cast<size_t>(p);
    const C inv_std = batch_stats ? std::sqrt(C(1) / (var[p] + epsilon)) : C(1) / std::sqrt(var[p] + epsilon);
    a[k] = inv_std * scale[p];
    b[k] = bias[p] - mean[p] * a[k];
  }
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const int64_t ch = plane % c, at = plane * spatial;
    if (per_position) {
      const C* ap = a.data() + ch * spatial;
      const C* bp = b.data() + ch * spatial;
      for (int64_t s = 0; s < spatial; ++s) ys[at + s] = xs[at + s] * ap[s] + bp[s];
    } else {
      const C a_ch = a[static_cast<size_t>(ch)], b_ch = b[static_cast<size_t>(ch)];
      for (int64_t s = 0; s < spatial; ++s) ys[at + s] = xs[at + s] * a_ch + b_ch;
    }
  }
}

// The forms of BatchNormalization: is_test and spatial (1..6, only is_test=1 is supported), spatial
// (7, 8), neither (9..13), training_mode and the running statistics outputs (14 on).
enum class BatchNormForm { kIsTest, kSpatial, kPlain, kTraining };

template <BatchNormForm Form>
Result<BatchNormAttrs> prepare_batch_norm(const ir::Node& node, int64_t version) {
  BatchNormAttrs a;
  if (Form == BatchNormForm::kIsTest) {
    QONNX_ASSIGN_OR_RETURN(const int64_t is_test, int_attr(node, "is_test", 0));
    if (is_test == 0)
      return Status(Code::kUnsupported, "BatchNormalization in training mode (is_test=0) is not supported before opset 14");
  }
  if (Form == BatchNormForm::kTraining) {
    QONNX_ASSIGN_OR_RETURN(a.training, flag_attr(node, "training_mode", false));
  }
  bool extra_outputs = false;
  for (size_t k = 1; k < node.outputs().size(); ++k) extra_outputs |= node.outputs()[k] != nullptr;
  if (extra_outputs && Form != BatchNormForm::kTraining)
    return Status(Code::kUnsupported, fmt::format("the training outputs (mean, var, saved_mean, saved_var) of BatchNormalization-{} "
                                                  "are not supported (before opset 14); only Y is", version));
  if (extra_outputs && !a.training)
    return Status(Code::kInvalidModel, "running_mean / running_var outputs need training_mode=1");
  if (Form == BatchNormForm::kIsTest || Form == BatchNormForm::kSpatial) {
    QONNX_ASSIGN_OR_RETURN(const int64_t spatial, int_attr(node, "spatial", 1));
    a.per_position_allowed = spatial == 0;
  }
  QONNX_ASSIGN_OR_RETURN(a.epsilon, float_attr(node, "epsilon", 1e-5f));
  QONNX_ASSIGN_OR_RETURN(a.momentum, float_attr(node, "momentum", 0.9f));
  return a;
}

}  // namespace

Result<BatchNormAttrs> prepare_batch_norm_7(const ir::Node& node, int64_t version) {
  return prepare_batch_norm<BatchNormForm::kSpatial>(node, version);
}

// BatchNormalization(X, scale, B, mean, var) -> Y [, running_mean, running_var]. Parameters hold
// one value per channel (or, for spatial=0 before opset 9, one per (channel, position)).
Status batch_normalization_kernel(exec::KernelContext& ctx, const BatchNormAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  if (x->rank() < 2)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 2 (N, C, ...), got shape {}",
                           dims_to_string(x->dims()));
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  const Tensor* params[5] = {x};
  for (size_t i = 1; i < 5; ++i) {
    QONNX_ASSIGN_OR_RETURN(params[i], ctx.required(i, names[i]));
    QONNX_RETURN_IF_ERROR(require_float(ctx, i, *params[i]));
  }
  const bool training = attrs.training;
  const int64_t n = x->dim(0), c = x->dim(1);
  const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
  bool per_position = false;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& p = *params[i];
    if (p.rank() == 1 && p.numel() == c) continue;
    if (attrs.per_position_allowed && p.numel() == c * spatial && !training) {
      per_position = true;
      continue;
    }
    return ctx.input_error(Code::kInvalidModel, i, "shape {} must be ({}), one value per channel",
                           dims_to_string(p.dims()), c);
  }
  const float epsilon = attrs.epsilon, momentum = attrs.momentum;
  bool all_float = true;
  for (const Tensor* t : params) all_float &= t->dtype() == DType::kFloat;
  if (all_float && !training) {
    Tensor y = ctx.output_buffer(DType::kFloat, x->dims(), {0});  // element i is read, then written
    apply_batch_norm(x->data<float>(), params[1]->data<float>(), params[2]->data<float>(), params[3]->data<float>(),
                     params[4]->data<float>(), epsilon, n, c, spatial, per_position, false, y.data<float>());
    ctx.set_output(0, std::move(y));
    return Status::ok();
  }
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x), scale = values_as<C>(*params[1]), bias = values_as<C>(*params[2]);
    std::vector<C> mean = values_as<C>(*params[3]), var = values_as<C>(*params[4]);
    std::vector<C> running_mean, running_var;
    const bool batch_stats = training && n * spatial > 0;
    if (training) {
      running_mean = mean;
      running_var = var;
    }
    if (batch_stats) {
      batch_statistics(xv.data(), n, c, spatial, mean.data(), var.data());
      const C mom = static_cast<C>(momentum), rest = static_cast<C>(1) - static_cast<C>(momentum);
      for (size_t ch = 0; ch < mean.size(); ++ch) {
        running_mean[ch] = running_mean[ch] * mom + mean[ch] * rest;
        running_var[ch] = running_var[ch] * mom + var[ch] * rest;
      }
    }
    std::vector<C> y(xv.size());
    apply_batch_norm(xv.data(), scale.data(), bias.data(), mean.data(), var.data(), static_cast<C>(epsilon), n, c, spatial,
                     per_position, batch_stats, y.data());
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    if (training) {
      ctx.set_output(1, to_tensor(running_mean, params[3]->dims(), params[3]->dtype()));
      ctx.set_output(2, to_tensor(running_var, params[4]->dims(), params[4]->dtype()));
    }
    return Status::ok();
  });
}

namespace {

struct EpsilonAttrs {
  float epsilon;
};

Result<EpsilonAttrs> prepare_instance_norm(const ir::Node& node, int64_t) {
  EpsilonAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.epsilon, float_attr(node, "epsilon", 1e-5f));
  return a;
}

// InstanceNormalization(X, scale, B): per (n, c) plane of W elements, onnxruntime's formula: mean and
// the sum of squared deviations in Eigen's order (ort::eigen_sum), a = (1 / sqrt(sq / W + eps)) * scale,
// b = B - mean * a, y = x * a + b.
Status instance_normalization(exec::KernelContext& ctx, const EpsilonAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "scale"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* bias, ctx.required(2, "B"));
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  if (x->rank() < 3)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x->dims()));
  const int64_t n = x->dim(0), c = x->dim(1);
  for (size_t i : {size_t{1}, size_t{2}}) {
    const Tensor& p = *ctx.input(i);
    QONNX_RETURN_IF_ERROR(require_float(ctx, i, p));
    if (p.rank() != 1 || p.dim(0) != c)
      return ctx.input_error(Code::kInvalidModel, i, "shape {} must be ({}), one value per channel",
                             dims_to_string(p.dims()), c);
  }
  const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
  const float epsilon = attrs.epsilon;
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x), s = values_as<C>(*scale), b = values_as<C>(*bias);
    std::vector<C> y(xv.size());
    for (int64_t plane = 0; plane < n * c && spatial > 0; ++plane) {
      const auto ch = static_cast<size_t>(plane % c);
      const C* xp = xv.data() + plane * spatial;
      const C count = static_cast<C>(spatial);
      const C mean = ort::eigen_sum_of(xp, spatial, plane * spatial) / count;
      const C squares = ort::eigen_sum<C>(spatial, 0, [xp, mean](int64_t i) { return (xp[i] - mean) * (xp[i] - mean); });
      const C a = C(1) / std::sqrt(squares / count + static_cast<C>(epsilon)) * s[ch];
      const C shift = b[ch] - mean * a;
      C* yp = y.data() + plane * spatial;
      for (int64_t i = 0; i < spatial; ++i) yp[i] = xp[i] * a + shift;
    }
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    return Status::ok();
  });
}

// GroupNormalization(X, scale, bias): per (n, group of C / num_groups channels) of k elements, the op's
// function body as onnxruntime runs it: mean = sum(x) / k, var = sum(x^2) / k - mean^2 (both sums in
// Eigen's order), y = ((x - mean) / sqrt(var + epsilon)) * scale + bias, with scale and bias per group
// (18..20) or per channel (21: the first stage in float32, stash_type 1, the only value onnxruntime
// implements).
struct GroupNormAttrs {
  int64_t groups;
  float epsilon;
  bool per_channel;
};

template <bool PerChannel>
Result<GroupNormAttrs> prepare_group_norm(const ir::Node& node, int64_t) {
  if (!node.has_attr("num_groups")) return Status(Code::kInvalidModel, "attribute 'num_groups' is required");
  QONNX_ASSIGN_OR_RETURN(const int64_t groups, int_attr(node, "num_groups", 0));
  if (groups <= 0) return Status(Code::kInvalidModel, fmt::format("attribute 'num_groups' must be positive, got {}", groups));
  if (PerChannel) {
    QONNX_ASSIGN_OR_RETURN(const int64_t stash_type, int_attr(node, "stash_type", 1));
    if (stash_type != 1)
      return Status(Code::kUnsupported, fmt::format("stash_type {} is not supported (1: float32)", stash_type));
  }
  QONNX_ASSIGN_OR_RETURN(const float epsilon, float_attr(node, "epsilon", 1e-5f));
  return GroupNormAttrs{groups, epsilon, PerChannel};
}

Status group_normalization(exec::KernelContext& ctx, const GroupNormAttrs& a) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "scale"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* bias, ctx.required(2, "bias"));
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  if (x->rank() < 2)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 2 (N, C, ...), got shape {}", dims_to_string(x->dims()));
  const int64_t n = x->dim(0), c = x->dim(1);
  if (c % a.groups != 0)
    return ctx.input_error(Code::kInvalidModel, 0, "{} channels do not split into num_groups {}", c, a.groups);
  const int64_t params = a.per_channel ? c : a.groups;
  for (size_t i : {size_t{1}, size_t{2}}) {
    const Tensor& p = *ctx.input(i);
    QONNX_RETURN_IF_ERROR(require_float(ctx, i, p));
    if (p.rank() != 1 || p.dim(0) != params)
      return ctx.input_error(Code::kInvalidModel, i, "shape {} must be ({}), one value per {}", dims_to_string(p.dims()), params,
                             a.per_channel ? "channel" : "group");
  }
  const int64_t per_group = c / a.groups;
  const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x), s = values_as<C>(*scale), b = values_as<C>(*bias);
    std::vector<C> y(xv.size());
    const int64_t block = per_group * spatial;
    for (int64_t blk = 0; blk < n * a.groups && block > 0; ++blk) {
      const int64_t group = blk % a.groups;
      const C* xp = xv.data() + blk * block;
      const C count = static_cast<C>(block);
      const C mean = ort::eigen_sum_of(xp, block, blk * block) / count;
      const C mean_sq =
          ort::eigen_sum<C>(block, ort::eigen_aligned_from<C>(blk * block), [xp](int64_t i) { return xp[i] * xp[i]; }) / count;
      const C denom = std::sqrt((mean_sq - mean * mean) + static_cast<C>(a.epsilon));
      for (int64_t j = 0; j < block; ++j) {
        const auto k = static_cast<size_t>(a.per_channel ? group * per_group + j / spatial : group);
        const auto i = static_cast<size_t>(blk * block + j);
        y[i] = ((xv[i] - mean) / denom) * s[k] + b[k];
      }
    }
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    return Status::ok();
  });
}

struct LayerNormAttrs {
  int64_t axis;
  float epsilon;
};

Result<LayerNormAttrs> prepare_layer_norm(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t stash_type, int_attr(node, "stash_type", 1));
  if (stash_type != 1)
    return Status(Code::kUnsupported, fmt::format("attribute 'stash_type': stash_type {} is not supported (1 = float)", stash_type));
  LayerNormAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.axis, int_attr(node, "axis", -1));
  QONNX_ASSIGN_OR_RETURN(a.epsilon, float_attr(node, "epsilon", 1e-5f));
  return a;
}

// LayerNormalization(X, Scale[, B]) -> Y[, Mean, InvStdDev]: for each row X[i0..i(axis-1), :], as
// onnxruntime computes them, mean = sum(x) / n and stddev = sqrt(sum(x^2) / n - mean^2 + eps) in double,
// Mean and InvStdDev = 1 / stddev rounded to the compute type; in float Y = fma((x - mean) * inv_std,
// Scale, B) (onnxruntime's Y for a Scale of more than one dimension, docs/ort-arithmetic.md), in double
// ((x - mean) / stddev) * Scale + B. Scale and B broadcast into X. Mean and InvStdDev have shape
// X.shape[:axis] + [1] * (rank - axis).
Status layer_normalization(exec::KernelContext& ctx, const LayerNormAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "Scale"));
  const Tensor* bias = ctx.input(2);
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  const int64_t rank = static_cast<int64_t>(x->rank());
  int64_t axis = attrs.axis;
  if (axis < -rank || axis >= rank)
    return ctx.error(Code::kInvalidModel, "axis {} is out of range for input rank {}", axis, rank);
  if (axis < 0) axis += rank;
  for (size_t i : {size_t{1}, size_t{2}}) {
    const Tensor* p = ctx.input(i);
    if (!p) continue;
    Dims joined;
    if (p->dtype() != x->dtype())
      return ctx.input_error(Code::kInvalidModel, i, "type {} differs from X's {}", dtype_name(p->dtype()),
                             dtype_name(x->dtype()));
    if (!exec::broadcast_dims(x->dims(), p->dims(), &joined) || joined != x->dims())
      return ctx.input_error(Code::kInvalidModel, i, "shape {} does not broadcast to X's {}",
                             dims_to_string(p->dims()), dims_to_string(x->dims()));
  }
  int64_t rows = 1, cols = 1;
  Dims stat_dims = x->dims();
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) rows *= x->dim(static_cast<size_t>(d));
    else {
      cols *= x->dim(static_cast<size_t>(d));
      stat_dims[static_cast<size_t>(d)] = 1;
    }
  }
  const float epsilon = attrs.epsilon;
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x), s = values_as<C>(*scale);
    const std::vector<C> b = bias ? values_as<C>(*bias) : std::vector<C>{};
    std::vector<C> normalized(xv.size()), mean(static_cast<size_t>(rows)), inv_std(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows && cols > 0; ++r) {
      const C* row = xv.data() + r * cols;
      double sum = 0, sum_sq = 0;
      for (int64_t j = 0; j < cols; ++j) {
        sum += static_cast<double>(row[j]);
        sum_sq += static_cast<double>(row[j]) * static_cast<double>(row[j]);
      }
      const double m = sum / static_cast<double>(cols);
      const double stddev = std::sqrt(sum_sq / static_cast<double>(cols) - m * m + static_cast<double>(epsilon));
      mean[static_cast<size_t>(r)] = static_cast<C>(m);
      inv_std[static_cast<size_t>(r)] = static_cast<C>(1.0 / stddev);
      for (int64_t j = 0; j < cols; ++j)
        normalized[static_cast<size_t>(r * cols + j)] =
            std::is_same_v<C, double> ? static_cast<C>((row[j] - m) / stddev) : (row[j] - mean[static_cast<size_t>(r)]) * inv_std[static_cast<size_t>(r)];
    }
    std::vector<C> y(xv.size());
    const Dims& bias_dims = bias ? bias->dims() : scale->dims();
    exec::for_each_broadcast<2>(x->dims(), {&scale->dims(), &bias_dims}, [&](int64_t o, const auto& off) {
      const C v = normalized[static_cast<size_t>(o)], sc = s[static_cast<size_t>(off[0])];
      const C bv = bias ? b[static_cast<size_t>(off[1])] : static_cast<C>(0);
      y[static_cast<size_t>(o)] = std::is_same_v<C, double> ? v * sc + bv : std::fma(v, sc, bv);
    });
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    ctx.set_output(1, to_tensor(mean, stat_dims, DType::kFloat));
    ctx.set_output(2, to_tensor(inv_std, stat_dims, DType::kFloat));
    return Status::ok();
  });
}

// MeanVarianceNormalization over `axes` (default 0, 2, 3), as onnxruntime computes it: each group (the
// elements sharing the other axes, in row-major order, laid out one group after the other) gets
// d = x - mean, then y = d / sqrt(mean of d^2), both means summed in Eigen's order. The op's function
// body, (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), agrees within rounding; for a group whose d^2 sum
// to 0 onnxruntime divides by 0, where this keeps the body's 1e-9 (a constant group gives 0, not NaN).
struct AxesAttrs {
  std::vector<int64_t> axes;
};

Result<AxesAttrs> prepare_mean_variance_norm(const ir::Node& node, int64_t) {
  AxesAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  if (!node.has_attr("axes")) a.axes = {0, 2, 3};
  return a;
}

Status mean_variance_normalization(exec::KernelContext& ctx, const AxesAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  const int64_t rank = static_cast<int64_t>(x->rank());
  Dims reduced = x->dims();
  for (int64_t a : attrs.axes) {
    if (a < -rank || a >= rank)
      return ctx.error(Code::kInvalidModel, "axis {} is out of range for input rank {}", a, rank);
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = 1;
  }
  const int64_t groups = checked_numel(reduced);
  const int64_t count = groups == 0 ? 0 : x->numel() / groups;
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x);
    // The groups' elements one group after the other (where each lands: group * count + its rank).
    std::vector<C> grouped(xv.size());
    std::vector<int64_t> filled(static_cast<size_t>(groups), 0);
    std::vector<size_t> slot(xv.size());
    exec::for_each_broadcast<1>(x->dims(), {&reduced}, [&](int64_t o, const auto& off) {
      const auto at = static_cast<size_t>(off[0] * count + filled[static_cast<size_t>(off[0])]++);
      grouped[at] = xv[static_cast<size_t>(o)];
      slot[static_cast<size_t>(o)] = at;
    });
    const C n = static_cast<C>(count);
    for (int64_t g = 0; g < groups; ++g) {
      C* d = grouped.data() + g * count;
      const C mean = ort::eigen_sum_of(d, count, g * count) / n;
      for (int64_t i = 0; i < count; ++i) d[i] -= mean;
      const C sd = std::sqrt(ort::eigen_sum<C>(count, 0, [d](int64_t i) { return d[i] * d[i]; }) / n);
      const C denom = sd == C(0) ? static_cast<C>(1e-9) : sd;
      for (int64_t i = 0; i < count; ++i) d[i] /= denom;
    }
    std::vector<C> y(xv.size());
    for (size_t o = 0; o < y.size(); ++o) y[o] = grouped[slot[o]];
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    return Status::ok();
  });
}

// LRN: y = x * (bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + ceil((size-1)/2)])^-beta,
// the window sum as onnxruntime keeps it: channel 0's from bias and its terms (alpha / size) * x^2 in
// order, each next channel's from the previous one plus the entering term minus the leaving one.
struct LrnAttrs {
  int64_t size;
  float alpha, beta, bias;
};

Result<LrnAttrs> prepare_lrn(const ir::Node& node, int64_t) {
  LrnAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.size, int_attr(node, "size", 0));
  if (a.size < 1 || a.size > kMaxWindowAttr)
    return Status(Code::kInvalidModel, fmt::format("attribute 'size': size must be a positive integer, got {}", a.size));
  QONNX_ASSIGN_OR_RETURN(a.alpha, float_attr(node, "alpha", 1e-4f));
  QONNX_ASSIGN_OR_RETURN(a.beta, float_attr(node, "beta", 0.75f));
  QONNX_ASSIGN_OR_RETURN(a.bias, float_attr(node, "bias", 1.0f));
  return a;
}

Status lrn(exec::KernelContext& ctx, const LrnAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_RETURN_IF_ERROR(require_float(ctx, 0, *x));
  if (x->rank() < 3)
    return ctx.input_error(Code::kInvalidModel, 0, "must have rank >= 3 (N, C, spatial...), got shape {}",
                           dims_to_string(x->dims()));
  const int64_t size = attrs.size;
  const float alpha = attrs.alpha, beta = attrs.beta, bias = attrs.bias;
  const int64_t n = x->dim(0), c = x->dim(1);
  const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  return with_compute_type(x->dtype(), [&](auto tag) -> Status {
    using C = decltype(tag);
    const std::vector<C> xv = values_as<C>(*x);
    std::vector<C> y(xv.size());
    const C term_scale = static_cast<C>(alpha) / static_cast<C>(size);
    // (alpha / size) * x^2 of channel k at position s; 0 outside the channels.
    const auto term = [&](int64_t b, int64_t k, int64_t s) {
      if (k < 0 || k >= c) return C(0);
      const C v = xv[static_cast<size_t>((b * c + k) * spatial + s)];
      return (v * v) * term_scale;
    };
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s) {
        C window = static_cast<C>(bias);
        for (int64_t k = -before; k <= after; ++k) window += term(b, k, s);
        for (int64_t ch = 0; ch < c; ++ch) {
          if (ch > 0) window = (window + term(b, ch + after, s)) + -term(b, ch - before - 1, s);
          const size_t at = static_cast<size_t>((b * c + ch) * spatial + s);
          y[at] = xv[at] * std::pow(window, -static_cast<C>(beta));
        }
      }
    ctx.set_output(0, to_tensor(y, x->dims(), x->dtype()));
    return Status::ok();
  });
}

}  // namespace

void register_normalization_kernels(exec::KernelRegistry& r) {
  // BatchNormalization-15 only added types; InstanceNormalization-6 and LRN-13 too (and dropped
  // consumed_inputs); MeanVarianceNormalization-13 added bfloat16.
  r.add("", "BatchNormalization", {1, 6},
        exec::typed_kernel<BatchNormAttrs, prepare_batch_norm<BatchNormForm::kIsTest>, batch_normalization_kernel>());
  r.add("", "BatchNormalization", {7, 8},
        exec::typed_kernel<BatchNormAttrs, prepare_batch_norm<BatchNormForm::kSpatial>, batch_normalization_kernel>());
  r.add("", "BatchNormalization", {9, 13},
        exec::typed_kernel<BatchNormAttrs, prepare_batch_norm<BatchNormForm::kPlain>, batch_normalization_kernel>());
  r.add("", "BatchNormalization", {14, exec::kNoUpperVersion},
        exec::typed_kernel<BatchNormAttrs, prepare_batch_norm<BatchNormForm::kTraining>, batch_normalization_kernel>());
  r.add("", "InstanceNormalization", {1, exec::kNoUpperVersion},
        exec::typed_kernel<EpsilonAttrs, prepare_instance_norm, instance_normalization>());
  r.add("", "LayerNormalization", {17, exec::kNoUpperVersion},
        exec::typed_kernel<LayerNormAttrs, prepare_layer_norm, layer_normalization>());
  r.add("", "GroupNormalization", {18, 20}, exec::typed_kernel<GroupNormAttrs, prepare_group_norm<false>, group_normalization>());
  r.add("", "GroupNormalization", {21, exec::kNoUpperVersion}, exec::typed_kernel<GroupNormAttrs, prepare_group_norm<true>, group_normalization>());
  r.add("", "MeanVarianceNormalization", {9, exec::kNoUpperVersion},
        exec::typed_kernel<AxesAttrs, prepare_mean_variance_norm, mean_variance_normalization>());
  r.add("", "LRN", {1, exec::kNoUpperVersion}, exec::typed_kernel<LrnAttrs, prepare_lrn, lrn>());
}

}  // namespace qonnx::kernels
