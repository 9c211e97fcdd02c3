// lower-quant{target=qdq|ngraph}: replaces QONNX quantizers by standard ops where the result is
// bit-exact (SEMANTICS.md sections 2 and 3), by an exact float emulation otherwise, and leaves a node
// in place (with a diagnostic) only when its parameters are not constant.
//
// Exactness notes: QONNX computes t = x/s + z in float32 and rounds t; QuantizeLinear rounds x/s and
// adds z afterwards. The two agree for z = 0 only: with z != 0 the float addition can itself round
// onto a tie (x/s = 1.49999988f, z = 2 gives t = 3.5f), so non-zero zero points use the float form.
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "kernels/qonnx/params.h"
#include "passes/node_emitter.h"
#include "passes/passes.h"
#include "passes/quant_annotation.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/kernels/ngraph.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/kernels/rounding.h"
#include "qonnx/support/float8.h"

namespace qonnx::passes {
namespace {

using kernels::QuantParams;
using kernels::RoundingMode;

// How a scale tensor varies over X: per tensor, along exactly one axis of X, or otherwise.
struct Layout {
  bool per_tensor = false;
  bool one_axis = false;
  int64_t axis = 0;      // axis of X
  int64_t channels = 1;
};

Layout layout_of(const Tensor& t, int64_t x_rank) {
  Layout l;
  if (t.numel() == 1) {
    l.per_tensor = true;
    return l;
  }
  int varying = -1, count = 0;
  for (size_t d = 0; d < t.rank(); ++d)
    if (t.dim(d) != 1) {
      varying = static_cast<int>(d);
      ++count;
    }
  if (count != 1 || x_rank < static_cast<int64_t>(t.rank())) return l;
  l.one_axis = true;
  l.axis = x_rank - static_cast<int64_t>(t.rank()) + varying;
  l.channels = t.dim(static_cast<size_t>(varying));
  return l;
}

bool all_integral(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = t.data<float>()[i];
    if (v != std::nearbyint(v)) return false;
  }
  return true;
}

bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<float>()[i] != 0.0f) return false;
  return true;
}

// A 1-D (or scalar) float32 copy of a per-tensor / one-axis parameter.
Tensor flatten_param(const Tensor& t, const Layout& l, int64_t channels) {
  if (l.per_tensor && channels == 1) return Tensor::scalar<float>(DType::kFloat, t.data<float>()[0]);
  Tensor out(DType::kFloat, {channels});
  for (int64_t c = 0; c < channels; ++c) out.data<float>()[c] = t.data<float>()[t.numel() == 1 ? 0 : c];
  return out;
}

// Every value of the float32 tensor t lies in [lo, hi].
bool all_within(const Tensor& t, double lo, double hi) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!(t.data<float>()[i] >= lo && t.data<float>()[i] <= hi)) return false;
  return true;
}

// The zero point fits the integer type of `storage_bits` bits (8 or 16) holding the codes: a storage
// cast would saturate it.
bool zero_point_fits(const QuantParams& p, int storage_bits) {
  const double values = std::ldexp(1.0, storage_bits);
  return p.is_signed ? all_within(p.zeropt, -values / 2, values / 2 - 1) : all_within(p.zeropt, 0, values - 1);
}

// Integer storage type for codes of `bits` bits; kUndefined when none fits the opset. Opset 21 adds
// int4/uint4 (<= 4 bits) and int16/uint16 (9..16 bits, or fewer bits whose zero point needs them).
// Every type holds the zero point too.
DType storage_type(const QuantParams& p, bool zero_point_is_zero, bool opset21) {
  if (opset21 && p.bits <= 4 && all_within(p.zeropt, p.is_signed ? -8 : 0, p.is_signed ? 7 : 15))
    return p.is_signed ? DType::kInt4 : DType::kUInt4;
  if (p.bits <= 8 && zero_point_fits(p, 8)) return p.is_signed ? DType::kInt8 : DType::kUInt8;
  if (opset21 && p.bits <= 16 && zero_point_fits(p, 16))
    return p.is_signed ? DType::kInt16 : DType::kUInt16;
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
    if (block >= 2 && (!best || block > best->block)) {
      best = Blocking{static_cast<int64_t>(a), block, Tensor(), Tensor()};
    }
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

Result<Tensor> to_storage(const Tensor& floats, DType dtype) { return exec::cast_tensor(floats, dtype); }

class LowerQuant : public pass::Pass {
 public:
  std::string name() const override { return "lower-quant"; }
  std::string summary() const override {
    return "Lower Quant/BipolarQuant/Trunc to QuantizeLinear/Clip/DequantizeLinear (exact cases), integer "
           "weights + DequantizeLinear, or exact float emulation";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    if (model.opset("").value_or(1) < 13)
      return Status(Code::kUnsupported, "lower-quant needs the default-domain opset >= 13: run upgrade-opset first");
    opset21_ = model.opset("").value_or(1) >= 21 && !ngraph() && !*byte_codes_;
    float8_ = model.opset("").value_or(1) >= 19 && !ngraph();
    if (ngraph()) model.ensure_import(kernels::kNGraphDomain, kernels::kNGraphDomainVersion);
    return pass::for_each_graph(model, [&](ir::Graph& g) -> Result<bool> {
      std::vector<ir::Node*> quantizers;
      for (const auto& n : g.nodes())
        if ((dialect::is_integer_quantizer(*n) || (float8_ && dialect::classify(*n) == dialect::Op::kFloatQuant)) && n->output(0))
          quantizers.push_back(n.get());
      bool changed = false;
      for (ir::Node* node : quantizers) {
        QONNX_ASSIGN_OR_RETURN(bool lowered, lower(model, node, ctx));
        changed |= lowered;
      }
      return changed;
    });
  }

 private:
  // Constant parameter inputs (1..): nullptr entries for X and for non-constant inputs. Returns
  // why a parameter is not constant ("" when all are).
  static std::string constant_params(const ir::Graph& g, const ir::Node& node, std::vector<Tensor>& storage,
                                     std::vector<const Tensor*>& ptrs) {
    storage.assign(node.inputs().size(), Tensor());
    ptrs.assign(node.inputs().size(), nullptr);
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
      ptrs[i] = &storage[i];
    }
    return "";
  }

  Result<bool> lower(ir::Model& model, ir::Node* node, pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    std::vector<Tensor> storage;
    std::vector<const Tensor*> ptrs;
    if (std::string why = constant_params(g, *node, storage, ptrs); !why.empty()) {
      ctx.record(*node, "left", why);
      if (strict_) return Status(Code::kUnsupported, why).with_context(node->describe());
      ctx.warn(node, why + ": left in place as a QONNX op, which standard ONNX runtimes cannot run");
      ++left_;
      return false;
    }
    exec::KernelContext kctx(*node, ptrs);
    int64_t x_rank = -1;
    if (auto t = g.type_of(node->input(0)); t && t->has_shape) x_rank = static_cast<int64_t>(t->dims.size());
    if (!ptrs.empty() && ptrs[0]) x_rank = static_cast<int64_t>(ptrs[0]->rank());
    Status st;
    const std::string& op = node->op_type();
    if (op == "FloatQuant") return lower_float_quant(model, node, kctx, x_rank, ctx);
    if (op == "Trunc") {
      st = lower_trunc(model, node, kctx, ctx);
    } else if (op == "BipolarQuant") {
      st = lower_bipolar(model, node, kctx, ctx);
    } else {
      auto p = kernels::read_quant_params(kctx);
      if (!p.is_ok()) return std::move(p).status().with_context(node->describe());
      st = ptrs[0] ? lower_constant_quant(model, node, kctx, p.value(), ctx)
                   : lower_activation_quant(model, node, p.value(), x_rank, ctx);
    }
    if (!st.is_ok()) return std::move(st).with_context(node->describe());
    return true;
  }

  // FloatQuant matching a float8 format (kernels::float_quant_float8_form): activations as
  // QuantizeLinear([saturate]) -> DequantizeLinear (opset 19), weights as a float8 initializer +
  // DequantizeLinear once every element is checked against the kernel. Anything else stays (reported).
  Result<bool> lower_float_quant(ir::Model& model, ir::Node* node, const exec::KernelContext& kctx, int64_t x_rank,
                                 pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    std::string why;
    const kernels::Float8Form form = kernels::float_quant_float8_form(kctx, &why);
    const DType format = form.format;
    auto scale_t = kernels::scale_input(kctx, 1, "scale");
    if (!scale_t.is_ok()) return std::move(scale_t).status().with_context(node->describe());
    const Tensor& scale = scale_t.value();
    const Layout sl = x_rank >= 0 ? layout_of(scale, x_rank) : Layout{scale.numel() == 1, false, 0, 1};
    if (format != DType::kUndefined && !sl.per_tensor && !sl.one_axis)
      why = x_rank < 0 ? "X's rank is unknown, so the axis of the scale is too" : "the scale varies along several axes";
    if (format == DType::kUndefined || !why.empty()) {
      why = "FloatQuant has no exact float8 form: " + why;
      ctx.record(*node, "left", why);
      if (strict_) return Status(Code::kUnsupported, why).with_context(node->describe());
      ctx.warn(node, why + ": left in place as a QONNX op, which standard ONNX runtimes cannot run");
      ++left_;
      return false;
    }
    const int64_t channels = sl.one_axis ? sl.channels : 1;
    const Tensor s = flatten_param(scale, sl, channels);
    const Tensor zp(format, sl.one_axis ? Dims{channels} : Dims{});
    const std::string where = sl.one_axis ? fmt::format("axis {}", sl.axis) : "per-tensor";
    auto axis_attr = [&](ir::Node& n) {
      if (sl.one_axis) n.set_attr("axis", sl.axis);
    };
    if (kctx.input(0)) {
      std::vector<const Tensor*> ins;
      for (size_t i = 0; i < kctx.num_inputs(); ++i) ins.push_back(kctx.input(i));
      auto outs = exec::evaluate_node(model, *node, ins);
      if (!outs.is_ok()) return std::move(outs).status().with_context(node->describe());
      auto x = kernels::float_input(kctx, 0, "X");
      if (!x.is_ok()) return std::move(x).status().with_context(node->describe());
      const Tensor& want = outs.value()[0];
      Tensor codes(format, x->dims());
      bool exact = want.dims() == x->dims();
      int64_t inner = 1;
      for (size_t d = static_cast<size_t>(sl.axis) + 1; sl.one_axis && d < x->rank(); ++d) inner *= x->dim(d);
      for (int64_t e = 0; exact && e < x->numel(); ++e) {
        const float se = s.data<float>()[sl.one_axis ? (e / inner) % channels : 0];
        const uint8_t code = float_to_float8(x->data<float>()[e] / se, format, form.saturate);
        codes.data<uint8_t>()[e] = code;
        const float got = float8_to_float(code, format) * se, ref = want.data<float>()[e];
        exact = got == ref || (std::isnan(got) && std::isnan(ref));
      }
      NodeEmitter e(g, node);
      if (!exact) {  // e.g. an infinite weight, which FloatQuant turns into NaN
        ctx.record(*node, "folded", "float initializer (a weight has no exact float8 code)");
        QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", want));
        ++weights_folded_float_;
        QONNX_RETURN_IF_ERROR(e.finish_with(w));
        return true;
      }
      ctx.record(*node, "lowered", fmt::format("float8 initializer ({}) + DequantizeLinear ({})", dtype_name(format), where));
      QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("float8", codes));
      QONNX_ASSIGN_OR_RETURN(ir::Value* sv, e.constant("scale", s));
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
      ++weights_to_dequantize_;
      QONNX_RETURN_IF_ERROR(e.finish("dequant", "DequantizeLinear", {q, sv, z}, axis_attr));
      return true;
    }
    ctx.record(*node, "lowered", fmt::format("QuantizeLinear -> DequantizeLinear ({}, {}, {})", dtype_name(format),
                                             form.saturate ? "saturate" : "saturate=0", where));
    ir::Value* x = node->input(0);
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
    QONNX_ASSIGN_OR_RETURN(ir::Value* sv, e.constant("scale", s));
    QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
    QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.op("quant", "QuantizeLinear", {x, sv, z}, [&](ir::Node& n) {
      axis_attr(n);
      if (!form.saturate) n.set_attr("saturate", 0);
    }));
    ++activations_to_qdq_;
    QONNX_RETURN_IF_ERROR(e.finish("dequant", "DequantizeLinear", {q, sv, z}, axis_attr));
    return true;
  }

  // Weights: integer codes in an initializer + DequantizeLinear, exact for any rounding mode.
  Status lower_constant_quant(ir::Model& model, ir::Node* node, const exec::KernelContext& kctx, const QuantParams& p,
                              pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    QONNX_ASSIGN_OR_RETURN(Tensor x, kernels::float_input(kctx, 0, "X"));
    QONNX_ASSIGN_OR_RETURN(Tensor codes, kernels::quant_codes(kctx, x, p));
    const int64_t rank = static_cast<int64_t>(codes.rank());
    Layout sl = layout_of(p.scale, rank), zl = layout_of(p.zeropt, rank);
    bool zp_zero = all_zero(p.zeropt);
    DType storage = storage_type(p, zp_zero, opset21_);
    bool layout_ok = (sl.per_tensor || sl.one_axis) &&
                     (zl.per_tensor || (zl.one_axis && sl.one_axis && zl.axis == sl.axis));
    bool zp_ok = all_integral(p.zeropt) && p.zeropt.numel() >= 1;
    if (storage != DType::kUndefined && layout_ok && zp_ok && codes.dims() == x.dims()) {
      int64_t channels = sl.one_axis ? sl.channels : 1;
      Tensor scale = flatten_param(p.scale, sl, channels);
      QONNX_ASSIGN_OR_RETURN(Tensor zp, to_storage(flatten_param(p.zeropt, zl, channels), storage));
      std::string form = fmt::format("integer initializer ({}) + {}{}", dtype_name(storage), ngraph() ? "Dequantize" : "DequantizeLinear",
                                     sl.one_axis ? fmt::format(" (axis {})", sl.axis) : "");
      ctx.record(*node, "lowered", form);
      std::string datatype = p.bipolar() ? "BIPOLAR" : fmt::format("{}INT{}", p.is_signed ? "" : "U", p.bits);
      NodeEmitter e(g, node);
      QONNX_ASSIGN_OR_RETURN(Tensor int_codes, to_storage(codes, storage));
      QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", int_codes));
      g.set_finn_datatype(q->name(), datatype);
      annotate_folded_quantizer(g, q->name(), p.narrow, kernels::rounding_mode_name(p.mode));
      QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", scale));
      std::vector<ir::Value*> ins = {q, s};
      if (!zp_zero || storage != DType::kInt32 || ngraph()) {
        QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
        ins.push_back(z);
      }
      ++weights_to_dequantize_;
      return finish_dequantize(e, ins, sl);
    }
    // Opset 21: a scale (and zero point) constant over blocks along one axis -> block_size.
    if (opset21_ && storage != DType::kUndefined && zp_ok && codes.dims() == x.dims()) {
      if (std::optional<Blocking> b = find_blocking(p.scale, p.zeropt, x.dims())) {
        ctx.record(*node, "lowered", fmt::format("integer initializer ({}) + DequantizeLinear (axis {}, block_size {})",
                                                 dtype_name(storage), b->axis, b->block));
        std::string datatype = p.bipolar() ? "BIPOLAR" : fmt::format("{}INT{}", p.is_signed ? "" : "U", p.bits);
        NodeEmitter e(g, node);
        QONNX_ASSIGN_OR_RETURN(Tensor int_codes, to_storage(codes, storage));
        QONNX_ASSIGN_OR_RETURN(Tensor block_zp, to_storage(b->zero_point, storage));
        QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", int_codes));
        g.set_finn_datatype(q->name(), datatype);
        annotate_folded_quantizer(g, q->name(), p.narrow, kernels::rounding_mode_name(p.mode));
        QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", b->scale));
        QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", block_zp));
        ++weights_to_dequantize_;
        return e.finish("dequant", "DequantizeLinear", {q, s, z}, [&](ir::Node& n) {
          n.set_attr("axis", b->axis);
          n.set_attr("block_size", b->block);
        });
      }
    }
    // No integer form fits (zero point not integral, scale over several axes, ...): float weights.
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, {&x, &p.scale, &p.zeropt, kctx.input(3)}));
    ctx.record(*node, "folded", "float initializer (no integer DequantizeLinear form fits)");
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", outs[0]));
    ++weights_folded_float_;
    return e.finish_with(w);
  }

  Status lower_activation_quant(ir::Model& model, ir::Node* node, const QuantParams& p, int64_t x_rank,
                                pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    ir::Value* x = node->input(0);
    bool zp_zero = all_zero(p.zeropt);
    Layout sl = x_rank >= 0 ? layout_of(p.scale, x_rank) : Layout{p.scale.numel() == 1, false, 0, 1};
    // 9..16 bits as int16/uint16 codes from opset 21 (qdq target only).
    bool qdq_range = p.bits >= 2 && p.bits <= (opset21_ ? 16 : 8);
    bool qdq_layout = sl.per_tensor || sl.one_axis;
    if (ngraph()) {
      // nGraph's Quantize adds the zero point after rounding, like QuantizeLinear: exact for z = 0.
      if (qdq_range && qdq_layout && zp_zero && !p.bipolar()) return emit_ngraph(g, node, p, sl, ctx);
      return emit_float_quant(g, node, p, ctx);
    }
    if (qdq_range && qdq_layout && zp_zero && p.mode == RoundingMode::kRound) {
      return emit_qcdq(g, node, p, sl, nullptr, ctx);
    }
    if (allow_approximate_ && qdq_range && qdq_layout && p.mode == RoundingMode::kRound && all_integral(p.zeropt) &&
        zero_point_fits(p, p.bits > 8 ? 16 : 8) && (p.zeropt.numel() == 1 || layout_of(p.zeropt, x_rank).axis == sl.axis)) {
      ctx.warn(node, "approximate: QuantizeLinear adds the zero point after rounding; x/s + z can round onto a tie "
                     "where QONNX does not (allow-approximate)");
      ++activations_approximate_;
      return emit_qcdq(g, node, p, sl, nullptr, ctx);
    }
    if (qdq_range && qdq_layout && zp_zero && (p.mode == RoundingMode::kFloor || p.mode == RoundingMode::kCeil)) {
      return emit_qcdq(g, node, p, sl, p.mode == RoundingMode::kFloor ? "Floor" : "Ceil", ctx);
    }
    (void)x;
    return emit_float_quant(g, node, p, ctx);
  }

  // [Div(s) -> Floor|Ceil ->] QuantizeLinear -> [Clip] -> DequantizeLinear.
  Status emit_qcdq(ir::Graph& g, ir::Node* node, const QuantParams& p, const Layout& sl, const char* pre_round,
                   pass::PassContext& ctx) {
    const bool wide = p.bits > 8;  // opset 21
    DType storage = p.is_signed ? (wide ? DType::kInt16 : DType::kInt8) : (wide ? DType::kUInt16 : DType::kUInt8);
    int64_t channels = sl.one_axis ? sl.channels : 1;
    Tensor scale = flatten_param(p.scale, sl, channels);
    Layout zl = p.zeropt.numel() == 1 ? Layout{true, false, 0, 1} : sl;
    QONNX_ASSIGN_OR_RETURN(Tensor zp, to_storage(flatten_param(p.zeropt, zl, channels), storage));
    const kernels::IntRange r = kernels::quant_int_range(p.bits, p.is_signed, p.narrow);
    const bool needs_clip = p.narrow || p.bits < (wide ? 16 : 8);
    // onnxruntime 1.30 has no int16/uint16 Clip (its function body needs Where on int16): the codes are
    // clipped as int32, which DequantizeLinear reads too. Exact: a widening cast.
    const bool clip_int32 = needs_clip && wide;
    std::string form = fmt::format("{}QuantizeLinear{} -> DequantizeLinear ({}{}){}", pre_round ? fmt::format("Div -> {} -> ", pre_round) : "",
                                   clip_int32 ? " -> Cast(int32) -> Clip" : needs_clip ? " -> Clip" : "", dtype_name(storage),
                                   sl.one_axis ? fmt::format(", axis {}", sl.axis) : ", per-tensor",
                                   all_zero(p.zeropt) ? "" : " APPROXIMATE: non-zero zero point");
    ctx.record(*node, "lowered", form);
    ir::Value* x = node->input(0);
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
    auto axis_attr = [&](ir::Node& n) {
      if (sl.one_axis) n.set_attr("axis", sl.axis);
    };
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", scale));
    QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
    ir::Value* q;
    if (pre_round) {
      // t = round_mode(x / s) is already an integer: QuantizeLinear with scale 1 only saturates and casts.
      // The scale in X's broadcast layout, as float32 whatever type the model stored it in.
      QONNX_ASSIGN_OR_RETURN(ir::Value* full_scale, e.constant("scale_full", p.scale));
      QONNX_ASSIGN_OR_RETURN(ir::Value* div, e.op("div", "Div", {x, full_scale}));
      QONNX_ASSIGN_OR_RETURN(ir::Value* rounded, e.op(pre_round == std::string("Floor") ? "floor" : "ceil", pre_round, {div}));
      QONNX_ASSIGN_OR_RETURN(ir::Value* one, e.constant("one", Tensor::scalar<float>(DType::kFloat, 1.0f)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* z0, e.constant("zero_point_scalar", Tensor(storage, {})));
      QONNX_ASSIGN_OR_RETURN(q, e.op("quant", "QuantizeLinear", {rounded, one, z0}));
    } else {
      QONNX_ASSIGN_OR_RETURN(q, e.op("quant", "QuantizeLinear", {x, s, z}, axis_attr));
    }
    ++activations_to_qdq_;
    if (clip_int32) {
      QONNX_ASSIGN_OR_RETURN(q, e.op("codes_int32", "Cast", {q}, [](ir::Node& n) { n.set_attr("to", static_cast<int64_t>(DType::kInt32)); }));
      QONNX_ASSIGN_OR_RETURN(q, emit_int_clip(e, q, DType::kInt32, r));
      std::vector<ir::Value*> dq_inputs = {q, s};
      if (!all_zero(p.zeropt)) {
        QONNX_ASSIGN_OR_RETURN(Tensor zp32, to_storage(flatten_param(p.zeropt, zl, channels), DType::kInt32));
        QONNX_ASSIGN_OR_RETURN(ir::Value* z32, e.constant("zero_point_int32", zp32));
        dq_inputs.push_back(z32);
      }
      return e.finish("dequant", "DequantizeLinear", dq_inputs, axis_attr);
    }
    if (needs_clip) {
      QONNX_ASSIGN_OR_RETURN(q, emit_int_clip(e, q, storage, r));
    }
    return e.finish("dequant", "DequantizeLinear", {q, s, z}, axis_attr);
  }

  // X as float32: QONNX computes in float32 whatever type X is stored in (the kernels convert it too),
  // and the emitted ops then see one element type.
  static Result<ir::Value*> float32_x(const ir::Graph& g, NodeEmitter& e, ir::Value* x) {
    auto type = g.type_of(x);
    if (!type || type->dtype == DType::kFloat || type->dtype == DType::kUndefined) return x;
    return e.op("x_float", "Cast", {x}, [](ir::Node& n) { n.set_attr("to", static_cast<int64_t>(DType::kFloat)); });
  }

  // The last node of a weight: DequantizeLinear, or the nGraph Dequantize.
  Status finish_dequantize(NodeEmitter& e, const std::vector<ir::Value*>& ins, const Layout& sl) {
    if (ngraph()) {
      return e.finish("dequant", "Dequantize", ins, [&](ir::Node& n) {
        n.set_attr("type", "f32");
        // Per-tensor: no `axes` at all (an empty INTS attribute is malformed for ONNX's checker).
        if (sl.one_axis) n.set_attr("axes", std::vector<int64_t>{sl.axis});
      }, kernels::kNGraphDomain);
    }
    return e.finish("dequant", "DequantizeLinear", ins, [&](ir::Node& n) {
      if (sl.one_axis) n.set_attr("axis", sl.axis);
    });
  }

  static Result<ir::Value*> emit_int_clip(NodeEmitter& e, ir::Value* q, DType storage, const kernels::IntRange& r) {
    // The bounds are integers within the storage type: the conversion is exact.
    QONNX_ASSIGN_OR_RETURN(const Tensor lo, to_storage(Tensor::scalar<float>(DType::kFloat, static_cast<float>(r.min)), storage));
    QONNX_ASSIGN_OR_RETURN(const Tensor hi, to_storage(Tensor::scalar<float>(DType::kFloat, static_cast<float>(r.max)), storage));
    QONNX_ASSIGN_OR_RETURN(ir::Value* lo_v, e.constant("clip_min", lo));
    QONNX_ASSIGN_OR_RETURN(ir::Value* hi_v, e.constant("clip_max", hi));
    return e.op("clip", "Clip", {q, lo_v, hi_v});
  }

  // Quantize(round_mode) -> [Clip] -> Dequantize in the nGraph domain.
  Status emit_ngraph(ir::Graph& g, ir::Node* node, const QuantParams& p, const Layout& sl, pass::PassContext& ctx) {
    DType storage = p.is_signed ? DType::kInt8 : DType::kUInt8;
    int64_t channels = sl.one_axis ? sl.channels : 1;
    const kernels::IntRange r = kernels::quant_int_range(p.bits, p.is_signed, p.narrow);
    const bool needs_clip = p.narrow || p.bits < 8;
    auto mode = kernels::ngraph_round_mode_for(p.mode);
    ctx.record(*node, "lowered", fmt::format("Quantize({}) -> {}Dequantize ({}{})", kernels::ngraph_round_mode_name(mode),
                                             needs_clip ? "Clip -> " : "", p.is_signed ? "i8" : "u8",
                                             sl.one_axis ? fmt::format(", axis {}", sl.axis) : ", per-tensor"));
    ir::Value* x = node->input(0);
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", flatten_param(p.scale, sl, channels)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", Tensor(storage, sl.one_axis ? Dims{channels} : Dims{})));
    QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.op("quant", "Quantize", {x, s, z}, [&](ir::Node& n) {
      n.set_attr("type", p.is_signed ? "i8" : "u8");
      if (sl.one_axis) n.set_attr("axes", std::vector<int64_t>{sl.axis});
      n.set_attr("round_mode", static_cast<int64_t>(mode));
    }, kernels::kNGraphDomain));
    if (needs_clip) {
      QONNX_ASSIGN_OR_RETURN(q, emit_int_clip(e, q, storage, r));
    }
    ++activations_to_ngraph_;
    return finish_dequantize(e, {q, s, z}, sl);
  }

  // Emits round_mode(t) with standard float ops.
  static Result<ir::Value*> emit_rounding(NodeEmitter& e, RoundingMode mode, ir::Value* t) {
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
      bool half_up = mode == RoundingMode::kHalfUp;
      QONNX_ASSIGN_OR_RETURN(ir::Value* half, e.constant("half", Tensor::scalar<float>(DType::kFloat, 0.5f)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* shifted, e.op(half_up ? "add_half" : "sub_half", half_up ? "Add" : "Sub", {abs, half}));
      QONNX_ASSIGN_OR_RETURN(magnitude, e.op(half_up ? "floor" : "ceil", half_up ? "Floor" : "Ceil", {shifted}));
    }
    return e.op("signed", "Mul", {sign, magnitude});
  }

  // Div(s) -> Add(z) -> Clip -> round -> Sub(z) -> Mul(s): QONNX's own float32 formula, op by op.
  Status emit_float_quant(ir::Graph& g, ir::Node* node, const QuantParams& p, pass::PassContext& ctx) {
    bool zp_zero = all_zero(p.zeropt);
    ctx.record(*node, "lowered", fmt::format("exact float emulation (Div, {}Clip, {}, {}Mul)", zp_zero ? "" : "Add, ",
                                             p.bipolar() ? "sign" : kernels::rounding_mode_name(p.mode), zp_zero ? "" : "Sub, "));
    ir::Value* x = node->input(0);
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
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
      annotate_folded_quantizer(g, node->output(0)->name(), p.narrow, kernels::rounding_mode_name(p.mode));
      QONNX_ASSIGN_OR_RETURN(q, emit_sign_code(e, t));
    } else {
      const kernels::IntRange r = kernels::quant_int_range(p.bits, p.is_signed, p.narrow);
      QONNX_ASSIGN_OR_RETURN(ir::Value* lo, e.constant("min", Tensor::scalar<float>(DType::kFloat, r.min)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* hi, e.constant("max", Tensor::scalar<float>(DType::kFloat, r.max)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* clipped, e.op("clip", "Clip", {t, lo, hi}));
      QONNX_ASSIGN_OR_RETURN(q, emit_rounding(e, p.mode, clipped));
    }
    if (z) {
      QONNX_ASSIGN_OR_RETURN(q, e.op("sub_zero_point", "Sub", {q, z}));
    }
    ++activations_to_float_ops_;
    return e.finish("scaled", "Mul", {q, s});
  }

  // t >= 0 ? +1 : -1 (NaN -> -1).
  static Result<ir::Value*> emit_sign_code(NodeEmitter& e, ir::Value* t) {
    QONNX_ASSIGN_OR_RETURN(ir::Value* zero, e.constant("zero", Tensor::scalar<float>(DType::kFloat, 0.0f)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* plus, e.constant("plus_one", Tensor::scalar<float>(DType::kFloat, 1.0f)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* minus, e.constant("minus_one", Tensor::scalar<float>(DType::kFloat, -1.0f)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* nonneg, e.op("nonnegative", "GreaterOrEqual", {t, zero}));
    return e.op("sign_code", "Where", {nonneg, plus, minus});
  }

  Status lower_bipolar(ir::Model& model, ir::Node* node, const exec::KernelContext& kctx, pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    QONNX_ASSIGN_OR_RETURN(Tensor scale, kernels::scale_input(kctx, 1, "scale"));
    if (kctx.input(0)) {
      QuantParams p;
      p.scale = scale;
      p.zeropt = Tensor::scalar<float>(DType::kFloat, 0.0f);
      p.bits = 1;
      // Codes compare x itself with 0; as weights they go to int8 + DequantizeLinear when the scale allows.
      QONNX_ASSIGN_OR_RETURN(Tensor x, kernels::float_input(kctx, 0, "X"));
      Layout sl = layout_of(scale, static_cast<int64_t>(x.rank()));
      if (sl.per_tensor || sl.one_axis) {
        // int4 holds +-1 from opset 21 (one byte per element in memory either way).
        const DType storage = opset21_ ? DType::kInt4 : DType::kInt8;
        Tensor codes(storage, x.dims());
        for (int64_t i = 0; i < x.numel(); ++i) codes.data<int8_t>()[i] = x.data<float>()[i] >= 0.0f ? 1 : -1;
        ctx.record(*node, "lowered", fmt::format("integer initializer ({}, bipolar) + {}", dtype_name(storage),
                                                 ngraph() ? "Dequantize" : "DequantizeLinear"));
        NodeEmitter e(g, node);
        QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("int", codes));
        g.set_finn_datatype(q->name(), "BIPOLAR");
        int64_t channels = sl.one_axis ? sl.channels : 1;
        QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", flatten_param(scale, sl, channels)));
        QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", Tensor(storage, sl.one_axis ? Dims{channels} : Dims{})));
        ++weights_to_dequantize_;
        return finish_dequantize(e, {q, s, z}, sl);
      }
      QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, {kctx.input(0), kctx.input(1)}));
      ctx.record(*node, "folded", "float initializer");
      NodeEmitter e(g, node);
      QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", outs[0]));
      return e.finish_with(w);
    }
    ctx.record(*node, "lowered", "exact float emulation (GreaterOrEqual, Where, Mul)");
    ir::Value* x = node->input(0);
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(x, float32_x(g, e, x));
    QONNX_ASSIGN_OR_RETURN(ir::Value* code, emit_sign_code(e, x));
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", scale));
    ++activations_to_float_ops_;
    return e.finish("scaled", "Mul", {code, s});
  }

  // Trunc as float ops with the kernel's own constants (k and z/k precomputed in float32).
  Status lower_trunc(ir::Model& model, ir::Node* node, const exec::KernelContext& kctx, pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    const int64_t version = ir::canonical_domain(node->domain()).empty() ? 1 : model.op_version(node->domain());
    const bool v2 = version >= 2 && node->inputs().size() == 6;
    if (kctx.input(0)) {
      std::vector<const Tensor*> ins;
      for (size_t i = 0; i < kctx.num_inputs(); ++i) ins.push_back(kctx.input(i));
      QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, ins));
      ctx.record(*node, "folded", "float initializer");
      NodeEmitter e(g, node);
      QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", outs[0]));
      return e.finish_with(w);
    }
    QONNX_ASSIGN_OR_RETURN(Tensor scale, kernels::scale_input(kctx, 1, "scale"));
    QONNX_ASSIGN_OR_RETURN(Tensor zeropt, kernels::zero_point_input(kctx, 2, "zeropt"));
    QONNX_ASSIGN_OR_RETURN(int in_bits, kernels::bitwidth_input(kctx, 3, "in_bitwidth"));
    QONNX_ASSIGN_OR_RETURN(RoundingMode mode, kernels::rounding_attr(*node, "FLOOR"));
    if (!v2 && node->inputs().size() != 5)
      return Status(Code::kInvalidModel, fmt::format("Trunc version {} takes 5 inputs, got {}", version, node->inputs().size()));
    Tensor out_scale, k;
    int out_bits;
    if (v2) {
      QONNX_ASSIGN_OR_RETURN(out_scale, kernels::scale_input(kctx, 4, "out_scale"));
      QONNX_ASSIGN_OR_RETURN(out_bits, kernels::bitwidth_input(kctx, 5, "out_bitwidth"));
      // One power-of-two step per element of broadcast(scale, out_scale): per-channel scales included.
      Dims k_dims;
      if (!exec::broadcast_dims(scale.dims(), out_scale.dims(), &k_dims))
        return Status(Code::kInvalidModel, fmt::format("Trunc scale {} and out_scale {} do not broadcast",
                                                       dims_to_string(scale.dims()), dims_to_string(out_scale.dims())));
      k = Tensor(DType::kFloat, k_dims);
      exec::for_each_broadcast<2>(k_dims, {&scale.dims(), &out_scale.dims()}, [&](int64_t o, const auto& at) {
        k.data<float>()[o] = kernels::trunc_v2_step(out_scale.data<float>()[at[1]], scale.data<float>()[at[0]]);
      });
    } else {
      QONNX_ASSIGN_OR_RETURN(out_bits, kernels::bitwidth_input(kctx, 4, "out_bitwidth"));
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
    QONNX_ASSIGN_OR_RETURN_CTX(const bool is_signed, node->attr<bool>("signed", true), node->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const bool narrow, node->attr<bool>("narrow", false), node->describe());
    const kernels::IntRange range = kernels::quant_int_range(out_bits, is_signed, narrow);
    ctx.record(*node, "lowered", fmt::format("exact float emulation of Trunc v{}{}", v2 ? 2 : 1,
                                             scale.numel() == 1 && out_scale.numel() <= 1 ? "" : " (per-channel)"));
    // `node` and `kctx` are gone once the emitter exists.
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
    ++activations_to_float_ops_;
    return e.finish("scaled", "Mul", {t, so});
  }

  pass::Option<std::string> target_{this, "target", "qdq",
                                    "qdq (ONNX QuantizeLinear/DequantizeLinear) | ngraph (qonnx_cc.ngraph Quantize/Dequantize)",
                                    {"qdq", "ngraph"}};
  pass::Option<bool> strict_{this, "strict", false, "1: a quantizer that cannot be lowered is an error"};
  pass::Option<bool> allow_approximate_{this, "allow-approximate", false,
                                        "1: QuantizeLinear with a non-zero zero point (differs from QONNX on rare ties)"};
  pass::Option<bool> byte_codes_{this, "byte-codes", false,
                                 "1: integer codes in int8/uint8/int32 at every opset (no int4/int16, no block_size), "
                                 "as Ascend's QuantBatchMatMul takes them"};
  bool ngraph() const { return *target_ == "ngraph"; }
  // The default-domain opset is 21 or more (qdq target): int4/uint4 and int16/uint16 codes, block_size.
  bool opset21_ = false;
  // The default-domain opset is 19 or more (qdq target): FloatQuant as float8 QuantizeLinear/DequantizeLinear.
  bool float8_ = false;
  pass::Statistic left_{this, "left", "nodes left in place (reported)"};
  pass::Statistic weights_to_dequantize_{this, "weights-to-dequantize", "weights as integer initializer + DequantizeLinear"};
  pass::Statistic weights_folded_float_{this, "weights-folded-float", "weights folded to float"};
  pass::Statistic activations_approximate_{this, "activations-approximate", "activations lowered approximately (allow-approximate)"};
  pass::Statistic activations_to_qdq_{this, "activations-to-qdq", "activations as QuantizeLinear/DequantizeLinear"};
  pass::Statistic activations_to_ngraph_{this, "activations-to-ngraph", "activations as nGraph Quantize/Dequantize"};
  pass::Statistic activations_to_float_ops_{this, "activations-to-float-ops", "activations as exact float ops"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_lower_quant() { return std::make_unique<LowerQuant>(); }

}  // namespace qonnx::passes
