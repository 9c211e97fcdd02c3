// The nGraph emitter: Quantize(round_mode) -> [Clip] -> Dequantize in the qonnx_cc.ngraph domain
// (SEMANTICS.md section 3). 8-bit codes at every opset.
#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "passes/lower_quant/lowering.h"
#include "qonnx/dialect/target_ops.h"
#include "qonnx/kernels/ngraph.h"

namespace qonnx::passes::lowering {
namespace {

using quant::QuantParams;

class NGraphEmitter : public QuantEmitter {
 public:
  explicit NGraphEmitter(pass::Pass* owner) : activations_to_ngraph_(owner, "activations-to-ngraph", "activations as nGraph Quantize/Dequantize") {}

  Capabilities capabilities(int64_t, bool) const override {
    Capabilities c;
    c.zero_point_always = true;
    return c;
  }
  void finish_model(ir::Model& model) const override { model.ensure_import(dialect::kNGraphDomain, dialect::kNGraphDomainVersion); }
  const char* dequantize_op() const override { return "Dequantize"; }

  Status finish_dequantize(NodeEmitter& e, const std::vector<ir::Value*>& inputs, const DequantizeLayout& layout) const override {
    return e.finish("dequant", "Dequantize", inputs, [&](ir::Node& n) {
      n.set_attr("type", "f32");
      // Per-tensor: no `axes` at all (an empty INTS attribute is malformed for ONNX's checker).
      if (layout.per_axis) n.set_attr("axes", std::vector<int64_t>{layout.axis});
    }, dialect::kNGraphDomain);
  }

  // nGraph's Quantize adds the zero point after rounding, like QuantizeLinear: exact for z = 0.
  Result<bool> lower_activation(Lowering& l, ir::Node* node, const QuantParams& p, const Layout& sl, int64_t) override {
    if (!(p.bits >= 2 && p.bits <= 8 && (sl.per_tensor || sl.one_axis) && all_zero(p.zeropt) && !p.bipolar())) return false;
    ir::Graph& g = *node->graph();
    const DType storage = p.is_signed ? DType::kInt8 : DType::kUInt8;
    const int64_t channels = sl.one_axis ? sl.channels : 1;
    const quant::IntRange r = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    const bool needs_clip = p.narrow || p.bits < 8;
    const auto mode = kernels::ngraph_round_mode_for(p.mode);
    record_outcome(l.ctx(), *node, "lowered", fmt::format("Quantize({}) -> {}Dequantize ({}{})", kernels::ngraph_round_mode_name(mode),
                                                 needs_clip ? "Clip -> " : "", p.is_signed ? "i8" : "u8",
                                                 sl.one_axis ? fmt::format(", axis {}", sl.axis) : ", per-tensor"));
    NodeEmitter e(g, node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* x, float32_x(g, e, node->input(0)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", flatten_param(p.scale, sl, channels)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zero_point", Tensor(storage, sl.one_axis ? Dims{channels} : Dims{})));
    QONNX_ASSIGN_OR_RETURN(ir::Value* q, e.op("quant", "Quantize", {x, s, z}, [&](ir::Node& n) {
      n.set_attr("type", p.is_signed ? "i8" : "u8");
      if (sl.one_axis) n.set_attr("axes", std::vector<int64_t>{sl.axis});
      n.set_attr("round_mode", static_cast<int64_t>(mode));
    }, dialect::kNGraphDomain));
    if (needs_clip) {
      QONNX_ASSIGN_OR_RETURN(q, emit_int_clip(e, q, storage, r));
    }
    ++activations_to_ngraph_;
    QONNX_RETURN_IF_ERROR(finish_dequantize(e, {q, s, z}, DequantizeLayout{sl.one_axis, sl.axis, 0}));
    return true;
  }

 private:
  pass::Statistic activations_to_ngraph_;
};

}  // namespace

std::unique_ptr<QuantEmitter> make_ngraph_emitter(pass::Pass* owner) { return std::make_unique<NGraphEmitter>(owner); }

}  // namespace qonnx::passes::lowering
