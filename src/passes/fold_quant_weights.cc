// fold-quant-weights: Quant / BipolarQuant / Trunc whose inputs are all initializers become
// precomputed tensors. mode=float stores the dequantized float weights; mode=int stores the integer
// codes (annotated with their finn_datatype) followed by Sub(zero point) and Mul(scale), which
// recompute exactly the float weights: Quant's output is (q - z) * s in float32.
#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/quant/params.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/kernels/quant.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

std::string integer_datatype(const quant::QuantParams& p) {
  if (p.bits == 1) return p.is_signed ? "BIPOLAR" : "BINARY";
  return fmt::format("{}INT{}", p.is_signed ? "" : "U", p.bits);
}

bool all_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<float>()[i] != 0.0f) return false;
  return true;
}

// Integer codes and parameters of a Quant or BipolarQuant node with constant inputs.
Result<std::pair<Tensor, quant::QuantParams>> integer_codes(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  const quant::NodeInputs in(node, inputs);
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(in, 0, "X"));
  if (dialect::classify(node) == dialect::Op::kBipolarQuant) {
    QONNX_ASSIGN_OR_RETURN(quant::QuantParams p, quant::read_bipolar_params(in));
    QONNX_ASSIGN_OR_RETURN(Tensor codes, quant::bipolar_codes(in, x, p.scale));
    return std::make_pair(std::move(codes), std::move(p));
  }
  QONNX_ASSIGN_OR_RETURN(quant::QuantParams p, quant::read_quant_params(in));
  QONNX_ASSIGN_OR_RETURN(Tensor codes, kernels::quant_codes(in, x, p));
  return std::make_pair(std::move(codes), std::move(p));
}

class FoldQuantWeights : public pass::GraphPass {
 public:
  std::string name() const override { return "fold-quant-weights"; }
  std::string summary() const override {
    return "Precompute Quant/BipolarQuant/Trunc on initializers (mode=float: float weights; "
           "mode=int: integer weights with their finn_datatype, then Sub(zeropt) and Mul(scale))";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    return fold(model, g, ctx);
  }

 private:
  Result<bool> fold(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) {
    std::vector<ir::Node*> candidates;
    for (const auto& n : g.nodes())
      if (dialect::is_integer_quantizer(*n) && n->output(0)) candidates.push_back(n.get());
    bool changed = false;
    for (ir::Node* node : candidates) {
      auto inputs = constant_inputs(g, *node);
      if (!inputs) continue;
      std::vector<const Tensor*> ptrs;
      for (const auto& t : *inputs) ptrs.push_back(t.defined() ? &t : nullptr);
      if (*mode_ == "int" && dialect::classify(*node) != dialect::Op::kTrunc) {
        QONNX_RETURN_IF_ERROR(fold_to_integers(model, node, ptrs, ctx));
      } else {
        QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, ptrs, ctx.registry()));
        record_outcome(ctx, *node, "folded", "constant inputs, precomputed float tensor");
        ir::Value* out = node->output(0);
        g.remove_node(node);
        QONNX_RETURN_IF_ERROR(g.set_initializer(out, outs[0]));
      }
      ++folded_quantizers_;
      changed = true;
    }
    return changed;
  }

  Status fold_to_integers(ir::Model& model, ir::Node* node, const std::vector<const Tensor*>& inputs,
                          pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    auto codes = integer_codes(*node, inputs);
    if (!codes.is_ok()) return std::move(codes).status().with_context(node->describe());
    auto& [q, p] = codes.value();
    std::string datatype = integer_datatype(p);
    record_outcome(ctx, *node, "folded", fmt::format("integer weights ({}) + Mul by scale", datatype));
    ir::Value* out = node->output(0);
    const std::string base = out->name();
    const std::string node_name = node->name().empty() ? base : node->name();
    ir::Node* before = g.next_node(node);
    g.remove_node(node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* current, g.add_initializer_tensor(g.unique_name(base + "_int"), q));
    g.set_finn_datatype(current->name(), datatype);
    if (!all_zero(p.zeropt)) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* zp, g.add_initializer_tensor(g.unique_name(base + "_zeropt"), p.zeropt));
      QONNX_ASSIGN_OR_RETURN(ir::Node* sub, g.insert_node(before, node_name + "_sub", "Sub", "", {current, zp},
                                                          {g.unique_name(base + "_centered")}));
      current = sub->output(0);
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* scale, g.add_initializer_tensor(g.unique_name(base + "_scale"), p.scale));
    auto mul = g.insert_node(before, node_name + "_mul", "Mul", "", {current, scale}, {base});
    return mul.status();
  }

  pass::Option<std::string> mode_{this, "mode", "float", "float | int (integer codes with a finn_datatype)", {"float", "int"}};
  pass::Statistic folded_quantizers_{this, "folded-quantizers", "quantizers on constants precomputed"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_quant_weights() { return std::make_unique<FoldQuantWeights>(); }

}  // namespace qonnx::passes
