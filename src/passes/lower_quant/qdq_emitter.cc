// The QDQ emitter: ONNX QuantizeLinear / Clip / DequantizeLinear. Wide codes (int4/int16) and
// block_size from opset 21, float8 FloatQuant from opset 19.
#include <cmath>

#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "passes/lower_quant/lowering.h"
#include "qonnx/exec/executor.h"
#include "qonnx/support/float8.h"

namespace qonnx::passes::lowering {
namespace {

using quant::QuantParams;
using quant::RoundingMode;

class QdqEmitter : public QuantEmitter {
 public:
  explicit QdqEmitter(pass::Pass* owner)
      : activations_approximate_(owner, "activations-approximate", "activations lowered approximately (allow-approximate)"),
        activations_to_qdq_(owner, "activations-to-qdq", "activations as QuantizeLinear/DequantizeLinear") {}

  Capabilities capabilities(int64_t opset, bool byte_codes) const override {
    Capabilities c;
    c.wide_codes = c.block_size = opset >= 21 && !byte_codes;
    c.float8 = opset >= 19;
    return c;
  }
  const char* dequantize_op() const override { return "DequantizeLinear"; }

  Status finish_dequantize(NodeEmitter& e, const std::vector<ir::Value*>& inputs, const DequantizeLayout& layout) const override {
    return e.finish("dequant", "DequantizeLinear", inputs, [&](ir::Node& n) {
      if (layout.per_axis) n.set_attr("axis", layout.axis);
      if (layout.block) n.set_attr("block_size", layout.block);
    });
  }

  Result<bool> lower_activation(Lowering& l, ir::Node* node, const QuantParams& p, const Layout& sl, int64_t x_rank) override {
    // 9..16 bits as int16/uint16 codes where wide codes exist.
    const bool qdq_range = p.bits >= 2 && p.bits <= (l.settings().caps.wide_codes ? 16 : 8);
    const bool qdq_layout = sl.per_tensor || sl.one_axis;
    const bool zp_zero = all_zero(p.zeropt);
    if (qdq_range && qdq_layout && zp_zero && p.mode == RoundingMode::kRound) {
      QONNX_RETURN_IF_ERROR(emit_qcdq(l, node, p, sl, nullptr));
      return true;
    }
    if (l.settings().allow_approximate && qdq_range && qdq_layout && p.mode == RoundingMode::kRound && all_integral(p.zeropt) &&
        zero_point_fits(p, p.bits > 8 ? 16 : 8) && (p.zeropt.numel() == 1 || layout_of(p.zeropt, x_rank).axis == sl.axis)) {
      l.ctx().warn(node, "approximate: QuantizeLinear adds the zero point after rounding; x/s + z can round onto a tie "
                         "where QONNX does not (allow-approximate)");
      ++activations_approximate_;
      QONNX_RETURN_IF_ERROR(emit_qcdq(l, node, p, sl, nullptr));
      return true;
    }
    if (qdq_range && qdq_layout && zp_zero && (p.mode == RoundingMode::kFloor || p.mode == RoundingMode::kCeil)) {
      QONNX_RETURN_IF_ERROR(emit_qcdq(l, node, p, sl, p.mode == RoundingMode::kFloor ? "Floor" : "Ceil"));
      return true;
    }
    return false;
  }

  // FloatQuant matching a float8 format (quant::float_quant_float8_form): activations as
  // QuantizeLinear([saturate]) -> DequantizeLinear, weights as a float8 initializer + DequantizeLinear
  // once every element is checked against the kernel. Anything else stays (reported).
  Result<bool> lower_float_quant(Lowering& l, ir::Node* node, const quant::NodeInputs& in, int64_t x_rank) override {
    ir::Graph& g = *node->graph();
    std::string why;
    const quant::Float8Form form = quant::float_quant_float8_form(in, &why);
    const DType format = form.format;
    auto scale_t = quant::scale_input(in, 1, "scale");
    if (!scale_t.is_ok()) return std::move(scale_t).status().with_context(node->describe());
    const Tensor& scale = scale_t.value();
    const Layout sl = layout_for_rank(scale, x_rank);
    if (format != DType::kUndefined && !sl.per_tensor && !sl.one_axis)
      why = x_rank < 0 ? "X's rank is unknown, so the axis of the scale is too" : "the scale varies along several axes";
    if (format == DType::kUndefined || !why.empty()) return l.leave(node, "FloatQuant has no exact float8 form: " + why);
    const int64_t channels = sl.one_axis ? sl.channels : 1;
    const Tensor s = flatten_param(scale, sl, channels);
    const Tensor zp(format, sl.one_axis ? Dims{channels} : Dims{});
    const std::string where = sl.one_axis ? fmt::format("axis {}", sl.axis) : "per-tensor";
    auto axis_attr = [&](ir::Node& n) {
      if (sl.one_axis) n.set_attr("axis", sl.axis);
    };
    if (in.input(0)) {
      std::vector<const Tensor*> ins;
      for (size_t i = 0; i < in.size(); ++i) ins.push_back(in.input(i));
      auto outs = exec::evaluate_node(l.model(), *node, ins);
      if (!outs.is_ok()) return std::move(outs).status().with_context(node->describe());
      auto x = quant::float_input(in, 0, "X");
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
        record_outcome(l.ctx(), *node, "folded", "float initializer (a weight has no exact float8 code)");
        QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", want));
        ++l.stats().weights_folded_float;
        QONNX_RETURN_IF_ERROR(e.finish_with(w));
        return true;
      }
      record_outcome(l.ctx(), *node, "lowered", fmt::format("float8 initializer ({}) + DequantizeLinear ({})", dtype_name(format), where));
      QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.constant("float8", codes));
      QONNX_ASSIGN_OR_RETURN(ir::Value* sv, e.constant("scale", s));
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", zp));
      ++l.stats().weights_to_dequantize;
      QONNX_RETURN_IF_ERROR(e.finish("dequant", "DequantizeLinear", {q, sv, z}, axis_attr));
      return true;
    }
    record_outcome(l.ctx(), *node, "lowered", fmt::format("QuantizeLinear -> DequantizeLinear ({}, {}, {})", dtype_name(format),
                                                 form.saturate ? "saturate" : "saturate=0", where));
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* x, float32_x(g, e, node->input(0)));
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

 private:
  // [Div(s) -> Floor|Ceil ->] QuantizeLinear -> [Clip] -> DequantizeLinear.
  Status emit_qcdq(Lowering& l, ir::Node* node, const QuantParams& p, const Layout& sl, const char* pre_round) {
    ir::Graph& g = *node->graph();
    const bool wide = p.bits > 8;  // opset 21
    const DType storage = p.is_signed ? (wide ? DType::kInt16 : DType::kInt8) : (wide ? DType::kUInt16 : DType::kUInt8);
    const int64_t channels = sl.one_axis ? sl.channels : 1;
    const Tensor scale = flatten_param(p.scale, sl, channels);
    const Layout zl = p.zeropt.numel() == 1 ? Layout{true, false, 0, 1} : sl;
    QONNX_ASSIGN_OR_RETURN(Tensor zp, to_storage(flatten_param(p.zeropt, zl, channels), storage));
    const quant::IntRange r = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    const bool needs_clip = p.narrow || p.bits < (wide ? 16 : 8);
    // onnxruntime 1.30 has no int16/uint16 Clip (its function body needs Where on int16): the codes are
    // clipped as int32, which DequantizeLinear reads too. Exact: a widening cast.
    const bool clip_int32 = needs_clip && wide;
    record_outcome(l.ctx(), *node, "lowered",
                   fmt::format("{}QuantizeLinear{} -> DequantizeLinear ({}{}){}", pre_round ? fmt::format("Div -> {} -> ", pre_round) : "",
                               clip_int32 ? " -> Cast(int32) -> Clip" : needs_clip ? " -> Clip" : "", dtype_name(storage),
                               sl.one_axis ? fmt::format(", axis {}", sl.axis) : ", per-tensor",
                               all_zero(p.zeropt) ? "" : " APPROXIMATE: non-zero zero point"));
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* x, float32_x(g, e, node->input(0)));
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

  pass::Statistic activations_approximate_;
  pass::Statistic activations_to_qdq_;
};

}  // namespace

std::unique_ptr<QuantEmitter> make_qdq_emitter(pass::Pass* owner) { return std::make_unique<QdqEmitter>(owner); }

}  // namespace qonnx::passes::lowering
