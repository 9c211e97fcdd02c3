// lower-quant{target=qdq|ngraph}: replaces QONNX quantizers by standard ops where the result is
// bit-exact (SEMANTICS.md sections 2 and 3), by an exact float emulation otherwise, and leaves a node
// in place (with a diagnostic) only when its parameters are not constant. The forms every backend
// shares live here; the backend's own forms come from its QuantEmitter.
//
// Exactness notes: QONNX computes t = x/s + z in float32 and rounds t; QuantizeLinear rounds x/s and
// adds z afterwards. The two agree for z = 0 only: with z != 0 the float addition can itself round
// onto a tie (x/s = 1.49999988f, z = 2 gives t = 3.5f), so non-zero zero points use the float form.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "passes/lower_quant/lowering.h"
#include "passes/passes.h"
#include "passes/quant_annotation.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/kernels/quant.h"

namespace qonnx::passes {
namespace lowering {
namespace {

using quant::QuantParams;
using quant::RoundingMode;

// Integer storage type for codes of `bits` bits; kUndefined when none fits. Wide codes add int4/uint4
// (<= 4 bits) and int16/uint16 (9..16 bits, or fewer bits whose zero point needs them). Every type
// holds the zero point too.
DType storage_type(const QuantParams& p, bool zero_point_is_zero, bool wide_codes) {
  if (wide_codes && p.bits <= 4 && all_within(p.zeropt, p.is_signed ? -8 : 0, p.is_signed ? 7 : 15))
    return p.is_signed ? DType::kInt4 : DType::kUInt4;
  if (p.bits <= 8 && zero_point_fits(p, 8)) return p.is_signed ? DType::kInt8 : DType::kUInt8;
  if (wide_codes && p.bits <= 16 && zero_point_fits(p, 16)) return p.is_signed ? DType::kInt16 : DType::kUInt16;
  if (zero_point_is_zero && p.bits <= 31) return DType::kInt32;  // DequantizeLinear reads int32 with zp 0
  return DType::kUndefined;
}

// Scale and zero point that are constant over blocks of `block` consecutive indices along `axis` of
// X (DequantizeLinear-21's block_size), stored with X's rank and ceil(dim / block) at the axis.
struct Blocking {
  int64_t axis = 0;
  int64_t block = 0;
  Tensor scale;
  Tensor zero_point;  // float32
};

// t (float32) broadcast to `dims`.
Tensor expand_to(const Tensor& t, const Dims& dims) {
  Tensor out(DType::kFloat, dims);
  exec::for_each_broadcast<1>(dims, {&t.dims()}, [&](int64_t o, const auto& at) { out.data<float>()[o] = t.data<float>()[at[0]]; });
  return out;
}

// The axis along which scale and zero point (expanded to X's dims) are constant over the largest
// blocks of at least 2: the block is the gcd of the indices where either changes along that axis.
std::optional<Blocking> find_blocking(const Tensor& scale, const Tensor& zeropt, const Dims& x_dims) {
  Dims s_dims;
  if (!exec::broadcast_dims(scale.dims(), x_dims, &s_dims) || s_dims != x_dims) return std::nullopt;
  if (!exec::broadcast_dims(zeropt.dims(), x_dims, &s_dims) || s_dims != x_dims) return std::nullopt;
  const Tensor s = expand_to(scale, x_dims), z = expand_to(zeropt, x_dims);
  std::optional<Blocking> best;
  int64_t inner = 1;
  for (size_t a = x_dims.size(); a-- > 0;) {
    const int64_t dim = x_dims[a];
    int64_t block = 0;  // gcd of the change indices; 0 while there is none
    for (int64_t e = 0; e < s.numel() && block != 1; ++e) {
      const int64_t i = (e / inner) % dim;
      if (i > 0 && (s.data<float>()[e] != s.data<float>()[e - inner] || z.data<float>()[e] != z.data<float>()[e - inner]))
        block = std::gcd(block, i);
    }
    if (block == 0) block = dim;
    if (block >= 2 && (!best || block > best->block)) best = Blocking{static_cast<int64_t>(a), block, Tensor(), Tensor()};
    inner *= dim;
  }
  if (!best) return std::nullopt;
  // One value per block: the first element of each.
  Dims b_dims = x_dims;
  const size_t ax = static_cast<size_t>(best->axis);
  b_dims[ax] = (x_dims[ax] + best->block - 1) / best->block;
  int64_t after = 1;
  for (size_t d = ax + 1; d < x_dims.size(); ++d) after *= x_dims[d];
  best->scale = Tensor(DType::kFloat, b_dims);
  best->zero_point = Tensor(DType::kFloat, b_dims);
  for (int64_t o = 0; o < best->scale.numel(); ++o) {
    const int64_t outer = o / (b_dims[ax] * after), b = (o / after) % b_dims[ax], i = o % after;
    const int64_t e = (outer * x_dims[ax] + b * best->block) * after + i;
    best->scale.data<float>()[o] = s.data<float>()[e];
    best->zero_point.data<float>()[o] = z.data<float>()[e];
  }
  return best;
}

DequantizeLayout dequantize_layout(const Layout& sl) { return DequantizeLayout{sl.one_axis, sl.axis, 0}; }

std::string integer_datatype(const QuantParams& p) {
  return p.bipolar() ? "BIPOLAR" : fmt::format("{}INT{}", p.is_signed ? "" : "U", p.bits);
}

// Emits round_mode(t) with standard float ops.
Result<ir::Value*> emit_rounding(NodeEmitter& e, RoundingMode mode, ir::Value* t) {
  switch (mode) {
    case RoundingMode::kRound: return e.op("round", "Round", {t});
    case RoundingMode::kCeil: return e.op("ceil", "Ceil", {t});
    case RoundingMode::kFloor: return e.op("floor", "Floor", {t});
    default: break;
  }
  // sign(t) * f(|t|) for the sign-symmetric modes.
  QONNX_ASSIGN_OR_RETURN(ir::Value* sign, e.op("sign", "Sign", {t}));
  QONNX_ASSIGN_OR_RETURN(ir::Value* abs, e.op("abs", "Abs", {t}));
  ir::Value* magnitude = nullptr;
  if (mode == RoundingMode::kUp) {
    QONNX_ASSIGN_OR_RETURN(magnitude, e.op("ceil", "Ceil", {abs}));
  } else if (mode == RoundingMode::kDown) {
    QONNX_ASSIGN_OR_RETURN(magnitude, e.op("floor", "Floor", {abs}));
  } else {
    const bool half_up = mode == RoundingMode::kHalfUp;
    QONNX_ASSIGN_OR_RETURN(ir::Value* half, e.constant("half", Tensor::scalar<float>(DType::kFloat, 0.5f)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* shifted, e.op(half_up ? "add_half" : "sub_half", half_up ? "Add" : "Sub", {abs, half}));
    QONNX_ASSIGN_OR_RETURN(magnitude, e.op(half_up ? "floor" : "ceil", half_up ? "Floor" : "Ceil", {shifted}));
  }
  return e.op("signed", "Mul", {sign, magnitude});
}

// t >= 0 ? +1 : -1 (NaN -> -1).
Result<ir::Value*> emit_sign_code(NodeEmitter& e, ir::Value* t) {
  QONNX_ASSIGN_OR_RETURN(ir::Value* zero, e.constant("zero", Tensor::scalar<float>(DType::kFloat, 0.0f)));
  QONNX_ASSIGN_OR_RETURN(ir::Value* plus, e.constant("plus_one", Tensor::scalar<float>(DType::kFloat, 1.0f)));
  QONNX_ASSIGN_OR_RETURN(ir::Value* minus, e.constant("minus_one", Tensor::scalar<float>(DType::kFloat, -1.0f)));
  QONNX_ASSIGN_OR_RETURN(ir::Value* nonneg, e.op("nonnegative", "GreaterOrEqual", {t, zero}));
  return e.op("sign_code", "Where", {nonneg, plus, minus});
}

// Constant parameter inputs (1..) into `tensors` (nullptr for X when it is not constant). Returns
// why a parameter is not constant ("" when all are).
std::string constant_params(const ir::Graph& g, const ir::Node& node, std::vector<Tensor>& storage,
                            std::vector<const Tensor*>& tensors) {
  storage.assign(node.inputs().size(), Tensor());
  tensors.assign(node.inputs().size(), nullptr);
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const ir::Value* v = node.input(i);
    if (!v) continue;
    if (!is_constant(v)) {
      if (i == 0) continue;
      if (v->is_initializer())
        return fmt::format("quantization parameter '{}' is an overridable graph input (kept by "
                           "freeze-initializer-inputs{{keep=1}})", v->name());
      return fmt::format("quantization parameter '{}' is not constant (computed at run time)", v->name());
    }
    auto t = g.initializer_tensor(v);
    if (!t.is_ok()) return fmt::format("quantization parameter '{}' cannot be read: {}", v->name(), t.status().message());
    storage[i] = t.value();
    tensors[i] = &storage[i];
  }
  return "";
}

}  // namespace

Result<bool> Lowering::leave(ir::Node* node, const std::string& why) {
  record_outcome(ctx_, *node, "left", why);
  if (settings_.strict) return Status(Code::kUnsupported, why).with_context(node->describe());
  ctx_.warn(node, why + ": left in place as a QONNX op, which standard ONNX runtimes cannot run");
  ++stats_.left;
  return false;
}

Result<bool> Lowering::lower(ir::Node* node) {
  ir::Graph& g = *node->graph();
  std::vector<Tensor> storage;
  std::vector<const Tensor*> tensors;
  if (std::string why = constant_params(g, *node, storage, tensors); !why.empty()) return leave(node, why);
  const quant::NodeInputs in(*node, tensors);
  int64_t x_rank = -1;
  if (auto t = g.type_of(node->input(0)); t && t->has_shape) x_rank = static_cast<int64_t>(t->dims.size());
  if (tensors[0]) x_rank = static_cast<int64_t>(tensors[0]->rank());
  Status st;
  switch (dialect::classify(*node)) {
    case dialect::Op::kFloatQuant: return emitter_.lower_float_quant(*this, node, in, x_rank);
    case dialect::Op::kTrunc: st = lower_trunc(node, in); break;
    case dialect::Op::kBipolarQuant: st = lower_bipolar(node, in); break;
    default: {
      auto p = quant::read_quant_params(in);
      if (!p.is_ok()) return std::move(p).status().with_context(node->describe());
      st = tensors[0] ? lower_constant_quant(node, in, p.value()) : lower_activation_quant(node, p.value(), x_rank);
    }
  }
  if (!st.is_ok()) return std::move(st).with_context(node->describe());
  return true;
}

Status Lowering::fold_to_float(ir::Node* node, const std::vector<const Tensor*>& inputs, const std::string& why) {
  QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model_, *node, inputs));
  record_outcome(ctx_, *node, "folded", why);
  NodeEmitter e(*node->graph(), node);
  QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", outs[0]));
  return e.finish_with(w);
}

// Weights: integer codes in an initializer + the emitter's dequantize op, exact for any rounding mode.
Status Lowering::lower_constant_quant(ir::Node* node, const quant::NodeInputs& in, const QuantParams& p) {
  ir::Graph& g = *node->graph();
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(in, 0, "X"));
  QONNX_ASSIGN_OR_RETURN(Tensor codes, kernels::quant_codes(in, x, p));
  const int64_t rank = static_cast<int64_t>(codes.rank());
  const Layout sl = layout_of(p.scale, rank), zl = layout_of(p.zeropt, rank);
  const bool zp_zero = all_zero(p.zeropt);
  const DType storage = storage_type(p, zp_zero, settings_.caps.wide_codes);
  const bool layout_ok = (sl.per_tensor || sl.one_axis) && (zl.per_tensor || (zl.one_axis && sl.one_axis && zl.axis == sl.axis));
  const bool zp_ok = all_integral(p.zeropt) && p.zeropt.numel() >= 1;
  if (storage != DType::kUndefined && layout_ok && zp_ok && codes.dims() == x.dims()) {
    const int64_t channels = sl.one_axis ? sl.channels : 1;
    const Tensor scale = flatten_param(p.scale, sl, channels);
    QONNX_ASSIGN_OR_RETURN(Tensor zp, to_storage(flatten_param(p.zeropt, zl, channels), storage));
    record_outcome(ctx_, *node, "lowered", fmt::format("integer initializer ({}) + {}{}", dtype_name(storage), emitter_.dequantize_op(),
                                              sl.one_axis ? fmt::format(" (axis {})", sl.axis) : ""));
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(Tensor int_codes, to_storage(codes, storage));
    QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", int_codes));
    g.set_finn_datatype(q->name(), integer_datatype(p));
    annotate_folded_quantizer(g, q->name(), p.narrow, quant::rounding_mode_name(p.mode));
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", scale));
    std::vector<ir::Value*> ins = {q, s};
    if (!zp_zero || storage != DType::kInt32 || settings_.caps.zero_point_always) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
      ins.push_back(z);
    }
    ++stats_.weights_to_dequantize;
    return emitter_.finish_dequantize(e, ins, dequantize_layout(sl));
  }
  // A scale (and zero point) constant over blocks along one axis -> block_size.
  if (settings_.caps.block_size && storage != DType::kUndefined && zp_ok && codes.dims() == x.dims()) {
    if (std::optional<Blocking> b = find_blocking(p.scale, p.zeropt, x.dims())) {
      record_outcome(ctx_, *node, "lowered", fmt::format("integer initializer ({}) + {} (axis {}, block_size {})", dtype_name(storage),
                                                emitter_.dequantize_op(), b->axis, b->block));
      NodeEmitter e(g, node);
      QONNX_ASSIGN_OR_RETURN(Tensor int_codes, to_storage(codes, storage));
      QONNX_ASSIGN_OR_RETURN(Tensor block_zp, to_storage(b->zero_point, storage));
      QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", int_codes));
      g.set_finn_datatype(q->name(), integer_datatype(p));
      annotate_folded_quantizer(g, q->name(), p.narrow, quant::rounding_mode_name(p.mode));
      QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", b->scale));
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", block_zp));
      ++stats_.weights_to_dequantize;
      return emitter_.finish_dequantize(e, {q, s, z}, DequantizeLayout{true, b->axis, b->block});
    }
  }
  // No integer form fits (zero point not integral, scale over several axes, ...): float weights.
  ++stats_.weights_folded_float;
  return fold_to_float(node, {&x, &p.scale, &p.zeropt, in.input(3)}, "float initializer (no integer DequantizeLinear form fits)");
}

Status Lowering::lower_activation_quant(ir::Node* node, const QuantParams& p, int64_t x_rank) {
  const Layout sl = layout_for_rank(p.scale, x_rank);
  QONNX_ASSIGN_OR_RETURN(const bool emitted, emitter_.lower_activation(*this, node, p, sl, x_rank));
  if (emitted) return Status::ok();
  return emit_float_quant(*node->graph(), node, p);
}

// Div(s) -> Add(z) -> Clip -> round -> Sub(z) -> Mul(s): QONNX's own float32 formula, op by op.
Status Lowering::emit_float_quant(ir::Graph& g, ir::Node* node, const QuantParams& p) {
  const bool zp_zero = all_zero(p.zeropt);
  record_outcome(ctx_, *node, "lowered", fmt::format("exact float emulation (Div, {}Clip, {}, {}Mul)", zp_zero ? "" : "Add, ",
                                            p.bipolar() ? "sign" : quant::rounding_mode_name(p.mode), zp_zero ? "" : "Sub, "));
  NodeEmitter e(g, node);
  QONNX_ASSIGN_OR_RETURN(ir::Value* x, float32_x(g, e, node->input(0)));
  QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", p.scale));
  QONNX_ASSIGN_OR_RETURN(ir::Value* t, e.op("div", "Div", {x, s}));
  ir::Value* z = nullptr;
  if (!zp_zero) {
    QONNX_ASSIGN_OR_RETURN(z, e.constant("zero_point", p.zeropt));
    QONNX_ASSIGN_OR_RETURN(t, e.op("add_zero_point", "Add", {t, z}));
  }
  ir::Value* q;
  if (p.bipolar()) {
    // narrow and the mode do not change a bipolar Quant, nor show in its float form: recorded.
    annotate_folded_quantizer(g, node->output(0)->name(), p.narrow, quant::rounding_mode_name(p.mode));
    QONNX_ASSIGN_OR_RETURN(q, emit_sign_code(e, t));
  } else {
    const quant::IntRange r = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    QONNX_ASSIGN_OR_RETURN(ir::Value* lo, e.constant("min", Tensor::scalar<float>(DType::kFloat, r.min)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* hi, e.constant("max", Tensor::scalar<float>(DType::kFloat, r.max)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* clipped, e.op("clip", "Clip", {t, lo, hi}));
    QONNX_ASSIGN_OR_RETURN(q, emit_rounding(e, p.mode, clipped));
  }
  if (z) {
    QONNX_ASSIGN_OR_RETURN(q, e.op("sub_zero_point", "Sub", {q, z}));
  }
  ++stats_.activations_to_float_ops;
  return e.finish("scaled", "Mul", {q, s});
}

Status Lowering::lower_bipolar(ir::Node* node, const quant::NodeInputs& in) {
  ir::Graph& g = *node->graph();
  QONNX_ASSIGN_OR_RETURN(const QuantParams p, quant::read_bipolar_params(in));
  if (in.input(0)) {
    // Codes compare x itself with 0; as weights they go to integer codes + dequantize when the scale allows.
    QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(in, 0, "X"));
    const Layout sl = layout_of(p.scale, static_cast<int64_t>(x.rank()));
    if (sl.per_tensor || sl.one_axis) {
      // int4 holds +-1 where wide codes exist (one byte per element in memory either way).
      const DType storage = settings_.caps.wide_codes ? DType::kInt4 : DType::kInt8;
      Tensor codes(storage, x.dims());
      for (int64_t i = 0; i < x.numel(); ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(quant::bipolar_code(x.data<float>()[i]));
      record_outcome(ctx_, *node, "lowered", fmt::format("integer initializer ({}, bipolar) + {}", dtype_name(storage), emitter_.dequantize_op()));
      NodeEmitter e(g, node);
      QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", codes));
      g.set_finn_datatype(q->name(), "BIPOLAR");
      const int64_t channels = sl.one_axis ? sl.channels : 1;
      QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", flatten_param(p.scale, sl, channels)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", Tensor(storage, sl.one_axis ? Dims{channels} : Dims{})));
      ++stats_.weights_to_dequantize;
      return emitter_.finish_dequantize(e, {q, s, z}, dequantize_layout(sl));
    }
    return fold_to_float(node, {in.input(0), in.input(1)}, "float initializer");
  }
  record_outcome(ctx_, *node, "lowered", "exact float emulation (GreaterOrEqual, Where, Mul)");
  NodeEmitter e(g, node);
  QONNX_ASSIGN_OR_RETURN(ir::Value* x, float32_x(g, e, node->input(0)));
  QONNX_ASSIGN_OR_RETURN(ir::Value* code, emit_sign_code(e, x));
  QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", p.scale));
  ++stats_.activations_to_float_ops;
  return e.finish("scaled", "Mul", {code, s});
}

// Trunc as float ops with the kernel's own constants (k and z/k precomputed in float32).
Status Lowering::lower_trunc(ir::Node* node, const quant::NodeInputs& in) {
  ir::Graph& g = *node->graph();
  const int64_t version = ir::canonical_domain(node->domain()).empty() ? 1 : model_.op_version(node->domain());
  const bool v2 = version >= 2 && node->inputs().size() == 6;
  if (in.input(0)) {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < in.size(); ++i) inputs.push_back(in.input(i));
    return fold_to_float(node, inputs, "float initializer");
  }
  QONNX_ASSIGN_OR_RETURN(Tensor scale, quant::scale_input(in, 1, "scale"));
  QONNX_ASSIGN_OR_RETURN(Tensor zeropt, quant::zero_point_input(in, 2, "zeropt"));
  QONNX_ASSIGN_OR_RETURN(int in_bits, quant::bitwidth_input(in, 3, "in_bitwidth"));
  QONNX_ASSIGN_OR_RETURN(RoundingMode mode, quant::rounding_attr(*node, "FLOOR"));
  if (!v2 && node->inputs().size() != 5)
    return Status(Code::kInvalidModel, fmt::format("Trunc version {} takes 5 inputs, got {}", version, node->inputs().size()));
  Tensor out_scale, k;
  int out_bits;
  if (v2) {
    QONNX_ASSIGN_OR_RETURN(out_scale, quant::scale_input(in, 4, "out_scale"));
    QONNX_ASSIGN_OR_RETURN(out_bits, quant::bitwidth_input(in, 5, "out_bitwidth"));
    // One power-of-two step per element of broadcast(scale, out_scale): per-channel scales included.
    Dims k_dims;
    if (!exec::broadcast_dims(scale.dims(), out_scale.dims(), &k_dims))
      return Status(Code::kInvalidModel, fmt::format("Trunc scale {} and out_scale {} do not broadcast",
                                                     dims_to_string(scale.dims()), dims_to_string(out_scale.dims())));
    k = Tensor(DType::kFloat, k_dims);
    exec::for_each_broadcast<2>(k_dims, {&scale.dims(), &out_scale.dims()}, [&](int64_t o, const auto& at) {
      k.data<float>()[o] = quant::trunc_v2_step(out_scale.data<float>()[at[1]], scale.data<float>()[at[0]]);
    });
  } else {
    QONNX_ASSIGN_OR_RETURN(out_bits, quant::bitwidth_input(in, 4, "out_bitwidth"));
    k = Tensor::scalar<float>(DType::kFloat, std::ldexp(1.0f, in_bits - out_bits));
  }
  // What the kernel subtracts after rounding: z (v1) or z / k (v2), in float32 per element.
  Tensor zk = zeropt;
  if (v2) {
    Dims zk_dims;
    if (!exec::broadcast_dims(zeropt.dims(), k.dims(), &zk_dims))
      return Status(Code::kInvalidModel, fmt::format("Trunc zeropt {} does not broadcast with the scales {}",
                                                     dims_to_string(zeropt.dims()), dims_to_string(k.dims())));
    zk = Tensor(DType::kFloat, zk_dims);
    exec::for_each_broadcast<2>(zk_dims, {&zeropt.dims(), &k.dims()}, [&](int64_t o, const auto& at) {
      zk.data<float>()[o] = zeropt.data<float>()[at[0]] / k.data<float>()[at[1]];
    });
  }
  QONNX_ASSIGN_OR_RETURN(const bool is_signed, node->attr<bool>("signed", true));
  QONNX_ASSIGN_OR_RETURN(const bool narrow, node->attr<bool>("narrow", false));
  const quant::IntRange range = quant::quant_int_range(out_bits, is_signed, narrow);
  record_outcome(ctx_, *node, "lowered", fmt::format("exact float emulation of Trunc v{}{}", v2 ? 2 : 1,
                                            scale.numel() == 1 && out_scale.numel() <= 1 ? "" : " (per-channel)"));
  // `node` and `in` are gone once the emitter exists.
  ir::Value* x = node->input(0);
  NodeEmitter e(g, node);
  QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
  QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", scale));
  QONNX_ASSIGN_OR_RETURN(ir::Value* t, e.op("div", "Div", {x, s}));
  if (!all_zero(zeropt)) {
    QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zeropt));
    QONNX_ASSIGN_OR_RETURN(t, e.op("add_zero_point", "Add", {t, z}));
  }
  QONNX_ASSIGN_OR_RETURN(t, e.op("round", "Round", {t}));
  QONNX_ASSIGN_OR_RETURN(ir::Value* kv, e.constant("shift", k));
  QONNX_ASSIGN_OR_RETURN(t, e.op("shift", "Div", {t, kv}));
  if (v2) {
    QONNX_ASSIGN_OR_RETURN(ir::Value* lo, e.constant("min", Tensor::scalar<float>(DType::kFloat, range.min)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* hi, e.constant("max", Tensor::scalar<float>(DType::kFloat, range.max)));
    QONNX_ASSIGN_OR_RETURN(t, e.op("clip", "Clip", {t, lo, hi}));
  }
  QONNX_ASSIGN_OR_RETURN(t, emit_rounding(e, mode, t));
  // z / k is NaN where a step underflowed to 0: subtract unless every element is a true zero.
  if (!all_zero(zk)) {
    QONNX_ASSIGN_OR_RETURN(ir::Value* zkv, e.constant("zero_point_out", zk));
    QONNX_ASSIGN_OR_RETURN(t, e.op("sub_zero_point", "Sub", {t, zkv}));
  }
  QONNX_ASSIGN_OR_RETURN(ir::Value* so, e.constant("out_scale", v2 ? out_scale : scale));
  ++stats_.activations_to_float_ops;
  return e.finish("scaled", "Mul", {t, so});
}

const std::vector<EmitterEntry>& emitters() {
  static const std::vector<EmitterEntry> entries = {
      {"qdq", "ONNX QuantizeLinear/DequantizeLinear", make_qdq_emitter},
      {"ngraph", "qonnx_cc.ngraph Quantize/Dequantize", make_ngraph_emitter},
  };
  return entries;
}

}  // namespace lowering

namespace {

using lowering::EmitterEntry;

std::vector<std::string> emitter_names() {
  std::vector<std::string> names;
  for (const EmitterEntry& e : lowering::emitters()) names.push_back(e.name);
  return names;
}

std::string emitter_help() {
  std::string help;
  for (const EmitterEntry& e : lowering::emitters()) help += fmt::format("{}{} ({})", help.empty() ? "" : " | ", e.name, e.description);
  return help;
}

class LowerQuant : public pass::GraphPass {
 public:
  std::string name() const override { return "lower-quant"; }
  std::string summary() const override {
    return "Lower Quant/BipolarQuant/Trunc to QuantizeLinear/Clip/DequantizeLinear (exact cases), integer "
           "weights + DequantizeLinear, or exact float emulation";
  }

 protected:
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    const int64_t opset = model.opset("").value_or(1);
    if (opset < 13) return Status(Code::kUnsupported, "lower-quant needs the default-domain opset >= 13: run upgrade-opset first");
    lowering::QuantEmitter& emitter = *emitters_.at(emitter_index());
    const lowering::Settings settings{emitter.capabilities(opset, *byte_codes_), *strict_, *allow_approximate_};
    lowering::Lowering lowering(model, ctx, emitter, settings, shared_stats_);
    std::vector<ir::Node*> quantizers;
    for (const auto& n : g.nodes())
      if ((dialect::is_integer_quantizer(*n) || (settings.caps.float8 && dialect::classify(*n) == dialect::Op::kFloatQuant)) &&
          n->output(0))
        quantizers.push_back(n.get());
    bool changed = false;
    for (ir::Node* node : quantizers) {
      QONNX_ASSIGN_OR_RETURN(bool lowered, lowering.lower(node));
      changed |= lowered;
    }
    return changed;
  }
  // The emitter's model-level needs (its domain import), whatever was lowered.
  Result<bool> finish(ir::Model& model, bool changed, pass::PassContext&) override {
    emitters_.at(emitter_index())->finish_model(model);
    return changed;
  }

 private:
  size_t emitter_index() const {
    const auto names = emitter_names();
    return static_cast<size_t>(std::find(names.begin(), names.end(), *target_) - names.begin());
  }
  static std::vector<std::unique_ptr<lowering::QuantEmitter>> make_emitters(pass::Pass* owner) {
    std::vector<std::unique_ptr<lowering::QuantEmitter>> out;
    for (const EmitterEntry& e : lowering::emitters()) out.push_back(e.make(owner));
    return out;
  }

  pass::Option<std::string> target_{this, "target", "qdq", emitter_help(), emitter_names()};
  pass::Option<bool> strict_{this, "strict", false, "1: a quantizer that cannot be lowered is an error"};
  pass::Option<bool> allow_approximate_{this, "allow-approximate", false,
                                        "1: QuantizeLinear with a non-zero zero point (differs from QONNX on rare ties)"};
  pass::Option<bool> byte_codes_{this, "byte-codes", false,
                                 "1: integer codes in int8/uint8/int32 at every opset (no int4/int16, no block_size), "
                                 "for consumers that take byte codes"};
  // Statistics in the order list-passes shows them: the shared forms, each emitter's, the float forms.
  pass::Statistic left_{this, "left", "nodes left in place (reported)"};
  pass::Statistic weights_to_dequantize_{this, "weights-to-dequantize", "weights as integer initializer + DequantizeLinear"};
  pass::Statistic weights_folded_float_{this, "weights-folded-float", "weights folded to float"};
  std::vector<std::unique_ptr<lowering::QuantEmitter>> emitters_ = make_emitters(this);
  pass::Statistic activations_to_float_ops_{this, "activations-to-float-ops", "activations as exact float ops"};
  const lowering::SharedStatistics shared_stats_{left_, weights_to_dequantize_, weights_folded_float_, activations_to_float_ops_};
};

}  // namespace

std::unique_ptr<pass::Pass> make_lower_quant() { return std::make_unique<LowerQuant>(); }

}  // namespace qonnx::passes
