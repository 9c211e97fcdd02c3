// nGraph-style Quantize / Dequantize (SEMANTICS.md section 3; encoding in qonnx/kernels/ngraph.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "qonnx/dialect/target_ops.h"
#include "kernels/common/attr_check.h"
#include "kernels/ngraph/ngraph_kernels.h"
#include "kernels/common/axis.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/ngraph.h"

namespace qonnx::kernels {

std::optional<NGraphRoundMode> ngraph_round_mode_from_int(int64_t value) {
  if (value < 0 || value > 8) return std::nullopt;
  return static_cast<NGraphRoundMode>(value);
}

const char* ngraph_round_mode_name(NGraphRoundMode mode) {
  switch (mode) {
    case NGraphRoundMode::kNearestTowardInfinity: return "ROUND_NEAREST_TOWARD_INFINITY";
    case NGraphRoundMode::kNearestTowardZero: return "ROUND_NEAREST_TOWARD_ZERO";
    case NGraphRoundMode::kNearestUpward: return "ROUND_NEAREST_UPWARD";
    case NGraphRoundMode::kNearestDownward: return "ROUND_NEAREST_DOWNWARD";
    case NGraphRoundMode::kNearestTowardEven: return "ROUND_NEAREST_TOWARD_EVEN";
    case NGraphRoundMode::kTowardInfinity: return "ROUND_TOWARD_INFINITY";
    case NGraphRoundMode::kTowardZero: return "ROUND_TOWARD_ZERO";
    case NGraphRoundMode::kUp: return "ROUND_UP";
    case NGraphRoundMode::kDown: return "ROUND_DOWN";
  }
  return "?";
}

NGraphRoundMode ngraph_round_mode_for(quant::RoundingMode mode) {
  switch (mode) {
    case quant::RoundingMode::kRound: return NGraphRoundMode::kNearestTowardEven;
    case quant::RoundingMode::kCeil: return NGraphRoundMode::kUp;
    case quant::RoundingMode::kFloor: return NGraphRoundMode::kDown;
    case quant::RoundingMode::kUp: return NGraphRoundMode::kTowardInfinity;
    case quant::RoundingMode::kDown: return NGraphRoundMode::kTowardZero;
    case quant::RoundingMode::kHalfUp: return NGraphRoundMode::kNearestTowardInfinity;
    case quant::RoundingMode::kHalfDown: return NGraphRoundMode::kNearestTowardZero;
  }
  return NGraphRoundMode::kNearestTowardEven;
}

namespace {

// The `type` attribute of Quantize: the quantized element type.
std::optional<DType> quantized_type(const std::string& text) {
  if (text == "i8") return DType::kInt8;
  if (text == "u8") return DType::kUInt8;
  if (text == "i32") return DType::kInt32;
  return std::nullopt;
}

// The attributes of Quantize (type, round_mode, axes) and Dequantize (type "f32", axes), parsed once
// per node at plan time.
struct QuantizeAttrs {
  DType qtype = DType::kFloat;  // Quantize's output type; Dequantize's is always float
  std::string type_text;
  NGraphRoundMode mode{};
  std::vector<int64_t> axes;
};

Result<QuantizeAttrs> quantize_attrs(const ir::Node& node, int64_t) {
  QuantizeAttrs a;
  if (!node.has_attr("type")) return Status(Code::kInvalidModel, "attribute 'type' (i8, u8 or i32) is required");
  QONNX_ASSIGN_OR_RETURN(a.type_text, string_attr(node, "type", ""));
  const auto qtype = quantized_type(a.type_text);
  if (!qtype) return Status(Code::kUnsupported, fmt::format("type '{}' is not supported (i8, u8 or i32)", a.type_text));
  a.qtype = *qtype;
  if (!node.has_attr("round_mode")) return Status(Code::kInvalidModel, "attribute 'round_mode' (0..8) is required");
  QONNX_ASSIGN_OR_RETURN(const int64_t mode_value, int_attr(node, "round_mode", -1));
  const auto mode = ngraph_round_mode_from_int(mode_value);
  if (!mode) return Status(Code::kInvalidModel, fmt::format("round_mode {} is not an nGraph RoundMode (0..8)", mode_value));
  a.mode = *mode;
  QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  return a;
}

Result<QuantizeAttrs> dequantize_attrs(const ir::Node& node, int64_t) {
  QuantizeAttrs a;
  QONNX_ASSIGN_OR_RETURN(a.type_text, string_attr(node, "type", "f32"));
  if (a.type_text != "f32") return Status(Code::kUnsupported, fmt::format("type '{}' is not supported (f32)", a.type_text));
  QONNX_ASSIGN_OR_RETURN(a.axes, ints_attr(node, "axes"));
  return a;
}

// scale/zero_point viewed with the input's rank: the input's dims at `axes`, 1 elsewhere, so the
// broadcast walk reads element j of the parameters for every input coordinate projected onto axes.
Result<Dims> parameter_view(const exec::KernelContext& ctx, const std::vector<int64_t>& axes_attr, const Dims& in_dims) {
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<int64_t> axes;
  for (int64_t a : axes_attr) {
    int64_t axis = 0;
    if (!normalize_axis(a, rank, &axis))
      return ctx.error(Code::kInvalidModel, "axis {} is out of range for input rank {}", a, rank);
    axes.push_back(axis);
  }
  // axes is a set in nGraph: the parameters' dims follow the input's axis order.
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return ctx.error(Code::kInvalidModel, "axes {} name an axis twice", dims_to_string(axes_attr));
  Dims expected;
  for (int64_t a : axes) expected.push_back(in_dims[static_cast<size_t>(a)]);
  const std::pair<size_t, const char*> params[] = {{1, "scale"}, {2, "zero_point"}};
  for (const auto& [i, what] : params) {
    const Tensor* p = ctx.input(i);
    if (p->dims() != expected)
      return ctx.input_error(Code::kInvalidModel, i,
                             "{} shape {} must be the input's dims at axes {}, i.e. {} (no broadcasting)", what,
                             dims_to_string(p->dims()), dims_to_string(axes), dims_to_string(expected));
  }
  Dims view(in_dims.size(), 1);
  for (int64_t a : axes) view[static_cast<size_t>(a)] = in_dims[static_cast<size_t>(a)];
  return view;
}

// Every scale element finite and non-zero (a zero or non-finite scale has no quantized meaning).
Status check_scale(const exec::KernelContext& ctx, const Tensor& scale) {
  const float* s = scale.data<float>();
  for (int64_t k = 0; k < scale.numel(); ++k) {
    if (!std::isfinite(s[k]) || s[k] == 0.0f)
      return ctx.input_error(Code::kFailed, 1, "scale must be finite and non-zero, got {} at element {}", s[k], k);
  }
  return Status::ok();
}

// Stores q (already rounded, zero point added) clamped to Q's full range. The clamp runs in double
// because float32 cannot hold INT32_MAX; NaN (from a NaN input) becomes the zero point.
template <typename Q>
Q saturate(float q, Q zero_point) {
  if (std::isnan(q)) return zero_point;
  double v = std::clamp(static_cast<double>(q), static_cast<double>(std::numeric_limits<Q>::min()),
                        static_cast<double>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(v);
}

Status quantize(exec::KernelContext& ctx, const QuantizeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "scale"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* zp, ctx.required(2, "zero_point"));
  const DType qtype = attrs.qtype;
  const DType real = x->dtype();
  if (real != DType::kFloat && real != DType::kFloat16 && real != DType::kBFloat16)
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (float, float16 or bfloat16)",
                           dtype_name(real));
  if (scale->dtype() != real)
    return ctx.input_error(Code::kInvalidModel, 1, "scale type {} differs from the input's {}",
                           dtype_name(scale->dtype()), dtype_name(real));
  if (zp->dtype() != qtype)
    return ctx.input_error(Code::kInvalidModel, 2, "zero_point type {} differs from the quantized type {} ('{}')",
                           dtype_name(zp->dtype()), dtype_name(qtype), attrs.type_text);
  QONNX_ASSIGN_OR_RETURN(Dims param_view, parameter_view(ctx, attrs.axes, x->dims()));
  QONNX_ASSIGN_OR_RETURN(const Tensor xf, exec::cast_tensor(*x, DType::kFloat));
  QONNX_ASSIGN_OR_RETURN(const Tensor sf, exec::cast_tensor(*scale, DType::kFloat));
  QONNX_RETURN_IF_ERROR(check_scale(ctx, sf));

  Tensor y(qtype, x->dims());
  exec::visit_dtype(qtype, [&](auto tag) {
    using Q = decltype(tag);
    if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int32_t>) {
      const float* xs = xf.data<float>();
      const float* ss = sf.data<float>();
      const Q* zs = zp->data<Q>();
      Q* ys = y.data<Q>();
      exec::for_each_broadcast<2>(x->dims(), {&x->dims(), &param_view}, [&](int64_t o, const auto& off) {
        float q = apply_ngraph_rounding(attrs.mode, xs[off[0]] / ss[off[1]]);
        q += static_cast<float>(zs[off[1]]);
        ys[o] = saturate<Q>(q, zs[off[1]]);
      });
    }
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status dequantize(exec::KernelContext& ctx, const QuantizeAttrs& attrs) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* x, ctx.required(0, "input"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* scale, ctx.required(1, "scale"));
  QONNX_ASSIGN_OR_RETURN(const Tensor* zp, ctx.required(2, "zero_point"));
  const DType qtype = x->dtype();
  if (qtype != DType::kInt8 && qtype != DType::kUInt8 && qtype != DType::kInt32)
    return ctx.input_error(Code::kUnsupported, 0, "type {} is not supported (int8, uint8 or int32)", dtype_name(qtype));
  if (scale->dtype() != DType::kFloat)
    return ctx.input_error(Code::kInvalidModel, 1, "scale type {} differs from the output type float",
                           dtype_name(scale->dtype()));
  if (zp->dtype() != qtype)
    return ctx.input_error(Code::kInvalidModel, 2, "zero_point type {} differs from the input's {}",
                           dtype_name(zp->dtype()), dtype_name(qtype));
  QONNX_ASSIGN_OR_RETURN(Dims param_view, parameter_view(ctx, attrs.axes, x->dims()));
  QONNX_RETURN_IF_ERROR(check_scale(ctx, *scale));

  Tensor y(DType::kFloat, x->dims());
  exec::visit_dtype(qtype, [&](auto tag) {
    using Q = decltype(tag);
    if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int32_t>) {
      const Q* xs = x->data<Q>();
      const float* ss = scale->data<float>();
      const Q* zs = zp->data<Q>();
      float* ys = y.data<float>();
      exec::for_each_broadcast<2>(x->dims(), {&x->dims(), &param_view}, [&](int64_t o, const auto& off) {
        // Integer difference first (exact, also for int32), then one float32 multiply.
        const int64_t d = static_cast<int64_t>(xs[off[0]]) - static_cast<int64_t>(zs[off[1]]);
        ys[o] = static_cast<float>(d) * ss[off[1]];
      });
    }
  });
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_ngraph_kernels(exec::KernelRegistry& r) {
  const exec::VersionRange versions{dialect::kNGraphDomainVersion, exec::kNoUpperVersion};
  r.add(dialect::kNGraphDomain, dialect::kNGraphQuantize, versions, exec::typed_kernel<QuantizeAttrs, quantize_attrs, quantize>());
  r.add(dialect::kNGraphDomain, dialect::kNGraphDequantize, versions, exec::typed_kernel<QuantizeAttrs, dequantize_attrs, dequantize>());
}

}  // namespace qonnx::kernels
