// Activations (Relu LeakyRelu PRelu Elu Selu Celu Sigmoid HardSigmoid HardSwish Tanh Softplus
// Softsign ThresholdedRelu Shrink Mish-18 Gelu-20), Clip, and Dropout in inference mode. Formulas follow the ONNX
// reference: float attributes are applied in the input's compute type. float Sigmoid, Tanh and Gelu compute
// as onnxruntime does (docs/ort-arithmetic.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/common/attr_check.h"
#include "kernels/common/integer_form.h"
#include "kernels/isa/isa.h"
#include "kernels/onnx/elementwise_common.h"
#include "kernels/onnx/onnx_kernels.h"
#include "kernels/onnx/ort_arithmetic.h"

namespace qonnx::kernels {
namespace {

constexpr auto kRelu = [](auto v) { return v > 0 ? v : decltype(v)(0); };

Status relu(exec::KernelContext& ctx) { return unary_kernel<kFloats | kSignedInts>(ctx, kRelu); }

void relu_in_place(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kRelu(y[i]);
}
#if QONNX_ISA_X86
// The same loop compiled for AVX2 (8 lanes; the baseline build vectorizes it 4 wide): the same function of
// each element, so the same bits.
__attribute__((target("avx2"))) void relu_in_place_avx2(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = kRelu(y[i]);
}
#endif

// Relu after a layer (on its float32 output): the kernel's own function.
class ReluEpilogue final : public SteppedEpilogue {
 public:
  avx2::ElementwiseStep step() const override { return {}; }
  void apply(float* y, int64_t n) const override {
#if QONNX_ISA_X86
    if (isa::current(isa::Family::kQuant) >= isa::Isa::kAvx2) return relu_in_place_avx2(y, n);
#endif
    relu_in_place(y, n);
  }
};

std::shared_ptr<const exec::Epilogue> relu_epilogue(const exec::PrepackContext&) {
  static const auto epilogue = std::make_shared<const ReluEpilogue>();
  return epilogue;
}

// The float attributes of the parameterised activations, parsed once per node at plan time.
struct Alpha {
  float alpha;
};
struct AlphaBeta {
  float alpha, beta;
};
struct SeluAttrs {
  float alpha, gamma;
};
struct ShrinkAttrs {
  float lambd, bias;
};

// Two FLOAT attributes with their defaults.
Result<std::pair<float, float>> float_attrs(const ir::Node& node, const char* a, float a_default, const char* b,
                                            float b_default) {
  QONNX_ASSIGN_OR_RETURN(const float va, float_attr(node, a, a_default));
  QONNX_ASSIGN_OR_RETURN(const float vb, float_attr(node, b, b_default));
  return std::make_pair(va, vb);
}

Result<Alpha> alpha_attr(const ir::Node& node, float fallback) {
  QONNX_ASSIGN_OR_RETURN(const float alpha, float_attr(node, "alpha", fallback));
  return Alpha{alpha};
}
Result<Alpha> leaky_relu_attrs(const ir::Node& node, int64_t) { return alpha_attr(node, 0.01f); }
Result<Alpha> elu_attrs(const ir::Node& node, int64_t) { return alpha_attr(node, 1.0f); }
Result<Alpha> thresholded_relu_attrs(const ir::Node& node, int64_t) { return alpha_attr(node, 1.0f); }
Result<Alpha> celu_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const Alpha a, alpha_attr(node, 1.0f));
  if (a.alpha == 0.0f) return Status(Code::kInvalidModel, "Celu alpha must not be 0");
  return a;
}
Result<SeluAttrs> selu_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(auto v, float_attrs(node, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f));
  return SeluAttrs{v.first, v.second};
}
Result<AlphaBeta> hard_sigmoid_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(auto v, float_attrs(node, "alpha", 0.2f, "beta", 0.5f));
  return AlphaBeta{v.first, v.second};
}
Result<ShrinkAttrs> shrink_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(auto v, float_attrs(node, "lambd", 0.5f, "bias", 0.0f));
  return ShrinkAttrs{v.first, v.second};
}

Status leaky_relu(exec::KernelContext& ctx, const Alpha& attrs) {
  const float alpha = attrs.alpha;
  return unary_kernel<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v < 0 ? static_cast<C>(alpha) * v : v;
  });
}

Status elu(exec::KernelContext& ctx, const Alpha& attrs) {
  const float alpha = attrs.alpha;
  return unary_kernel<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v < 0 ? static_cast<C>(alpha) * (std::exp(v) - C(1)) : v;
  });
}

Status selu(exec::KernelContext& ctx, const SeluAttrs& attrs) {
  const float alpha = attrs.alpha, gamma = attrs.gamma;
  return unary_kernel<kFloats>(ctx, [alpha, gamma](auto v) {
    using C = decltype(v);
    const C a = static_cast<C>(alpha), g = static_cast<C>(gamma);
    return v > 0 ? g * v : (std::exp(v) - C(1)) * a * g;
  });
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Status celu(exec::KernelContext& ctx, const Alpha& attrs) {
  const float alpha = attrs.alpha;
  return unary_kernel<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    const C a = static_cast<C>(alpha);
    return v > 0 ? v : a * (std::exp(v / a) - C(1));
  });
}

// float: MLAS's logistic, as onnxruntime; double: 1 / (1 + exp(-x)).
Status sigmoid(exec::KernelContext& ctx) {
  return unary_kernel_fma<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_same_v<C, float>) return ort::mlas_logistic(v);
    else return C(1) / (C(1) + std::exp(-v));
  });
}

// max(0, min(1, alpha * x + beta)); HardSwish is x times that with alpha 1/6, beta 1/2.
template <typename C>
C hard_sigmoid_of(C v, C alpha, C beta) {
  C t = alpha * v + beta;
  return t > C(1) ? C(1) : (t < C(0) ? C(0) : t);
}

Status hard_sigmoid(exec::KernelContext& ctx, const AlphaBeta& attrs) {
  const float alpha = attrs.alpha, beta = attrs.beta;
  return unary_kernel<kFloats>(ctx, [alpha, beta](auto v) {
    using C = decltype(v);
    return hard_sigmoid_of(v, static_cast<C>(alpha), static_cast<C>(beta));
  });
}

Status hard_swish(exec::KernelContext& ctx) {
  return unary_kernel<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    return v * hard_sigmoid_of(v, C(1) / C(6), C(0.5));
  });
}

// float: MLAS's tanh, as onnxruntime; double: std::tanh.
Status tanh(exec::KernelContext& ctx) {
  return unary_kernel_fma<kFloats>(ctx, [](auto v) {
    if constexpr (std::is_same_v<decltype(v), float>) return ort::mlas_tanh(v);
    else return std::tanh(v);
  });
}

// log(1 + exp(x)), written so that large x does not overflow.
Status softplus(exec::KernelContext& ctx) {
  return unary_kernel<kFloats>(ctx, [](auto v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); });
}

// Mish (opset 18): x * tanh(softplus(x)).
Status mish(exec::KernelContext& ctx) {
  return unary_kernel<kFloats>(ctx, [](auto v) { return v * std::tanh(v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v))); });
}

// Gelu's `approximate`: "none" (the normal CDF) or "tanh".
struct GeluAttrs {
  bool tanh;
};

Result<GeluAttrs> gelu_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const std::string approximate, string_attr(node, "approximate", "none"));
  if (approximate != "none" && approximate != "tanh")
    return Status(Code::kInvalidModel, fmt::format("Gelu approximate '{}' is not 'none' or 'tanh'", approximate));
  return GeluAttrs{approximate == "tanh"};
}

// Gelu (opset 20): x * Phi(x) with the normal CDF (approximate "none"), or its tanh approximation, as
// onnxruntime computes them: 0.5 * x * (1 + erf(x * (1 / sqrt 2))) and
// 0.5 * x * (1 + tanh(x * (0.044715 * sqrt(2 / pi) * x * x + sqrt(2 / pi)))), with MLAS's erf and tanh in float.
Status gelu(exec::KernelContext& ctx, const GeluAttrs& attrs) {
  if (attrs.tanh)
    return unary_kernel_fma<kFloats>(ctx, [](auto v) {
      using C = decltype(v);
      const C b = static_cast<C>(0.7978845608028654), c = static_cast<C>(0.035677408136300125);
      const C u = v * (c * v * v + b);
      C t;
      if constexpr (std::is_same_v<C, float>) t = ort::mlas_tanh(u);
      else t = std::tanh(u);
      return static_cast<C>(0.5) * v * (t + static_cast<C>(1));
    });
  return unary_kernel_fma<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    const C u = v * static_cast<C>(0.70710678118654752440);  // 1 / sqrt(2)
    C e;
    if constexpr (std::is_same_v<C, float>) e = ort::mlas_erf(u);
    else e = std::erf(u);
    return static_cast<C>(0.5) * v * (e + static_cast<C>(1));
  });
}

Status softsign(exec::KernelContext& ctx) {
  return unary_kernel<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    return v / (C(1) + std::fabs(v));
  });
}

Status thresholded_relu(exec::KernelContext& ctx, const Alpha& attrs) {
  const float alpha = attrs.alpha;
  return unary_kernel<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v > static_cast<C>(alpha) ? v : C(0);
  });
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between. Integers compute in double and
// convert back (truncating), floats in their compute type.
Status shrink(exec::KernelContext& ctx, const ShrinkAttrs& attrs) {
  const float lambd = attrs.lambd, bias = attrs.bias;
  return unary_kernel<kNumeric>(ctx, [lambd, bias](auto v) {
    using C = decltype(v);
    using F = std::conditional_t<kIsInt<C>, double, C>;
    const F x = static_cast<F>(v), l = static_cast<F>(lambd), b = static_cast<F>(bias);
    const F y = x < -l ? x + b : (x > l ? x - b : F(0));
    if constexpr (kIsInt<C>) return from_double<C>(y);
    else return y;
  });
}

// PRelu(X, slope): Y = X < 0 ? slope * X : X. From 7 slope broadcasts to X's shape
// (unidirectionally). Before 7 (`PerChannelSlope`) the spec only says a size-1 slope is shared;
// exports of that era (PyTorch, Caffe2) give a 1-D per-channel slope, applied along axis 1.
template <bool PerChannelSlope>
Status prelu(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "X"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* slope_in, ctx.required(1, "slope"));
  QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  Tensor slope = *slope_in;
  if (PerChannelSlope && slope.rank() == 1 && x->rank() >= 2 && slope.dim(0) == x->dim(1)) {
    Dims per_channel(x->rank() - 1, 1);
    per_channel[0] = slope.dim(0);
    slope = slope.reshaped(per_channel);
  }
  QONNX_ASSIGN_OR_RETURN(Dims dims, elementwise_output_dims(ctx, {x, &slope}));
  if (dims != x->dims())
    return ctx.input_error(Code::kInvalidModel, 1, "shape {} does not broadcast to X's shape {}",
                           dims_to_string(slope_in->dims()), dims_to_string(x->dims()));
  Tensor out = ctx.output_buffer(x->dtype(), dims, {0});
  QONNX_RETURN_IF_ERROR(visit_types<kFloats | kInts>(ctx, 0, x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_binary<T, T, T>(*x, slope, out, [](T xv, T sv) {
      using C = Compute<T>;
      const C v = load(xv), s = load(sv);
      if constexpr (kIsInt<C>) return v < 0 ? static_cast<T>(static_cast<Wrap<C>>(s) * static_cast<Wrap<C>>(v)) : xv;
      else return store<T>(v < 0 ? s * v : v);
    });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Clip: x limited to [lo, hi], `bounds(tag)` giving them for the storage type of `tag` in its
// compute type. min > max gives max everywhere (as numpy.clip); NaN stays NaN.
template <typename Bounds>
Status clip_between(exec::KernelContext& ctx, const Tensor& x, Bounds bounds) {
  Tensor out = ctx.output_buffer(x.dtype(), x.dims(), {0});
  QONNX_RETURN_IF_ERROR(visit_types<kNumeric>(ctx, 0, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    const std::pair<C, C> range = bounds(tag);
    const C lo = range.first, hi = range.second;
    apply_unary<T, T>(x, out, [lo, hi](T v) {
      C c = load(v);
      c = c < lo ? lo : c;
      c = c > hi ? hi : c;
      return store<T>(c);
    });
  }));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Clip 6-10: attributes min/max, float types only.
struct ClipAttrs {
  float min, max;
};

Result<ClipAttrs> clip_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(auto v, float_attrs(node, "min", std::numeric_limits<float>::lowest(), "max",
                                             std::numeric_limits<float>::max()));
  return ClipAttrs{v.first, v.second};
}

Status clip_by_attributes(exec::KernelContext& ctx, const ClipAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  if (!dtype_is_float(x->dtype())) return unsupported_type(ctx, 0, x->dtype());
  return clip_between(ctx, *x, [&attrs](auto tag) {
    using C = Compute<decltype(tag)>;
    if constexpr (is_float_storage_v<decltype(tag)>) return std::pair<C, C>(static_cast<C>(attrs.min), static_cast<C>(attrs.max));
    else return std::pair<C, C>(std::numeric_limits<C>::lowest(), std::numeric_limits<C>::max());
  });
}

// Clip from 11: optional scalar inputs min/max of X's dtype (12 widened the types, which the schema
// check enforces).
Status clip_by_inputs(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  const Tensor* bounds[2] = {ctx.input(1), ctx.input(2)};
  for (size_t k = 0; k < 2; ++k) {
    if (!bounds[k]) continue;
    QONNX_RETURN_IF_ERROR(require_same_dtype(ctx, 0, k + 1));
    if (bounds[k]->numel() != 1)
      return ctx.input_error(Code::kInvalidModel, k + 1, "must be a scalar, got shape {}", dims_to_string(bounds[k]->dims()));
  }
  return clip_between(ctx, *x, [&bounds](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    std::pair<C, C> range(std::numeric_limits<C>::lowest(), std::numeric_limits<C>::max());
    if (bounds[0]) range.first = load(bounds[0]->data<T>()[0]);
    if (bounds[1]) range.second = load(bounds[1]->data<T>()[0]);
    return range;
  });
}

// Dropout at inference: Y = X (shared storage), optional mask of all true (`BoolMask`, from 10; ones
// of X's type before). Training mode (`TrainingInput`, an input from 12) with a non-zero ratio is
// random and unsupported. The ratio attribute before 12 does not matter at inference.
template <bool BoolMask, bool TrainingInput>
Status dropout(exec::KernelContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "data"));
  if (TrainingInput) {
    const Tensor* ratio = ctx.input(1);
    const Tensor* training = ctx.input(2);
    if (training) {
      if (training->dtype() != DType::kBool || training->numel() != 1)
        return ctx.input_error(Code::kInvalidModel, 2, "training_mode must be a bool scalar");
      if (training->data<bool>()[0]) {
        double r = 0.5;
        if (ratio) {
          if (!dtype_is_float(ratio->dtype()) || ratio->numel() != 1)
            return ctx.input_error(Code::kInvalidModel, 1, "ratio must be a floating-point scalar");
          r = exec::element_as_double(*ratio, 0);
        }
        if (r != 0.0) return ctx.error(Code::kUnsupported, "Dropout in training mode (random) is not supported");
      }
    }
  }
  ctx.set_output(0, *x);
  if (ctx.num_outputs() > 1) {
    const DType mask_type = BoolMask ? DType::kBool : x->dtype();
    if (mask_type == DType::kBool) {
      Tensor mask(DType::kBool, x->dims());
      std::fill_n(mask.data<bool>(), mask.numel(), true);
      ctx.set_output(1, std::move(mask));
    } else {
      Tensor mask(mask_type, x->dims());
      QONNX_RETURN_IF_ERROR(visit_types<kNumeric>(ctx, 0, mask_type, [&](auto tag) {
        using T = decltype(tag);
        std::fill_n(mask.data<T>(), mask.numel(), from_double<T>(1.0));
      }));
      ctx.set_output(1, std::move(mask));
    }
  }
  return Status::ok();
}

}  // namespace

void register_activation_kernels(exec::KernelRegistry& r) {
  constexpr int kLatest = exec::kNoUpperVersion;
  // Relu, Sigmoid and Tanh 1 also had `consumed_inputs` (an in-place hint, not read).
  exec::Kernel relu_kernel{relu, nullptr, {}};
  relu_kernel.epilogue = relu_epilogue;
  r.add("", "Relu", {1, kLatest}, relu_kernel);
  r.add("", "LeakyRelu", {6, kLatest}, exec::typed_kernel<Alpha, leaky_relu_attrs, leaky_relu>());
  r.add("", "PRelu", {6, 6}, exec::Kernel{prelu<true>, nullptr, {}});
  r.add("", "PRelu", {7, kLatest}, exec::Kernel{prelu<false>, nullptr, {}});
  r.add("", "Elu", {6, kLatest}, exec::typed_kernel<Alpha, elu_attrs, elu>());
  r.add("", "Selu", {6, kLatest}, exec::typed_kernel<SeluAttrs, selu_attrs, selu>());
  r.add("", "Celu", {12, kLatest}, exec::typed_kernel<Alpha, celu_attrs, celu>());
  r.add("", "Sigmoid", {1, kLatest}, sigmoid);
  r.add("", "HardSigmoid", {6, kLatest}, exec::typed_kernel<AlphaBeta, hard_sigmoid_attrs, hard_sigmoid>());
  r.add("", "HardSwish", {14, kLatest}, hard_swish);
  r.add("", "Tanh", {1, kLatest}, tanh);
  r.add("", "Softplus", {1, kLatest}, softplus);
  r.add("", "Mish", {18, kLatest}, mish);
  r.add("", "Gelu", {20, kLatest}, exec::typed_kernel<GeluAttrs, gelu_attrs, gelu>());
  r.add("", "Softsign", {1, kLatest}, softsign);
  r.add("", "ThresholdedRelu", {10, kLatest}, exec::typed_kernel<Alpha, thresholded_relu_attrs, thresholded_relu>());
  r.add("", "Shrink", {9, kLatest}, exec::typed_kernel<ShrinkAttrs, shrink_attrs, shrink>());
  // Clip's bounds moved from attributes to inputs at 11.
  r.add("", "Clip", {6, 10}, exec::typed_kernel<ClipAttrs, clip_attrs, clip_by_attributes>());
  r.add("", "Clip", {11, kLatest}, exec::Kernel{clip_by_inputs, nullptr, {}});
  // Dropout: the mask became bool at 10; ratio and training_mode became inputs at 12.
  r.add("", "Dropout", {7, 9}, exec::Kernel{dropout<false, false>, nullptr, {}});
  r.add("", "Dropout", {10, 11}, exec::Kernel{dropout<true, false>, nullptr, {}});
  r.add("", "Dropout", {12, kLatest}, exec::Kernel{dropout<true, true>, nullptr, {}});
}

}  // namespace qonnx::kernels
