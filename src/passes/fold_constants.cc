// fold-constants: evaluates every node whose inputs are all constant with the registry kernels, in
// one topological sweep (a folded output makes its consumers foldable in the same sweep).
#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "passes/passes.h"

namespace qonnx::passes {

bool is_constant(const ir::Value* v) { return v && v->is_initializer() && !v->is_graph_input(); }

std::optional<std::vector<Tensor>> constant_inputs(const ir::Graph& graph, const ir::Node& node) {
  std::vector<Tensor> out;
  for (const ir::Value* v : node.inputs()) {
    if (!v) {
      out.emplace_back();
      continue;
    }
    if (!is_constant(v)) return std::nullopt;
    auto t = graph.initializer_tensor(v);
    if (!t.is_ok()) return std::nullopt;
    out.push_back(std::move(t).value());
  }
  return out;
}

namespace {

// Random and control-flow ops: their value is not a function of their inputs alone.
bool never_folded(const ir::Node& node) {
  static const char* const kOps[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                     "Multinomial", "Bernoulli", "If", "Loop", "Scan"};
  if (!ir::is_default_domain(node.domain())) return false;
  for (const char* op : kOps)
    if (node.op_type() == op) return true;
  return false;
}

// Quantization ops are the model's representation, kept unless they only compute a parameter.
bool kept_by_default(const ir::Node& node, bool skip_quantizers) {
  if (skip_quantizers && dialect::is_quantizer(node)) return true;
  static const char* const kOps[] = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"};
  if (!ir::is_default_domain(node.domain())) return false;
  for (const char* op : kOps)
    if (node.op_type() == op) return true;
  return false;
}

// Every output only feeds parameter inputs (scale, zero point, bit width, ...) of QONNX quantizers,
// which a lowering can only use as constants.
bool feeds_only_quantizer_parameters(const ir::Node& node) {
  bool used = false;
  for (const ir::Value* v : node.outputs()) {
    if (!v) continue;
    if (v->is_graph_output()) return false;
    for (const ir::Use& u : v->uses()) {
      if (u.input_index == 0 || !dialect::is_quantizer(*u.node)) return false;
      used = true;
    }
  }
  return used;
}

class FoldConstants : public pass::Pass {
 public:
  std::string name() const override { return "fold-constants"; }
  std::string summary() const override {
    return "Evaluate nodes whose inputs are all constant (never random ops; QuantizeLinear/DequantizeLinear only "
           "where they compute a quantizer parameter)";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    return pass::for_each_graph(model, [&](ir::Graph& g) { return fold(model, g, ctx); });
  }

 private:
  Result<bool> fold(const ir::Model& model, ir::Graph& g, pass::PassContext& ctx) {
    QONNX_ASSIGN_OR_RETURN(auto order, exec::topological_order(g));
    bool changed = false;
    for (const ir::Node* cnode : order) {
      ir::Node* node = const_cast<ir::Node*>(cnode);
      if (never_folded(*node) || node->outputs().empty()) continue;
      // Constant subgraphs feeding quantizer parameters always fold: lowering needs them as constants.
      const bool parameter = feeds_only_quantizer_parameters(*node);
      if (!parameter && kept_by_default(*node, skip_quantizers_)) continue;
      auto inputs = constant_inputs(g, *node);
      if (!inputs) continue;
      if (!ctx.registry().find(node->domain(), node->op_type(), model.op_version(node->domain()))) {
        ++skipped_no_kernel_;
        continue;
      }
      std::vector<const Tensor*> ptrs;
      for (const auto& t : *inputs) ptrs.push_back(t.defined() ? &t : nullptr);
      QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, ptrs, ctx.registry()));
      size_t bytes = 0;
      for (const auto& t : outs) bytes += t.nbytes();
      if (bytes > max_bytes_ && !parameter) {
        ++skipped_too_large_;
        continue;
      }
      if (dialect::is_quantizer(*node)) ctx.record(*node, "folded", "constant inputs, evaluated to a float initializer");
      std::vector<ir::Value*> outputs = node->outputs();
      g.remove_node(node);
      for (size_t k = 0; k < outputs.size(); ++k)
        if (outputs[k]) QONNX_RETURN_IF_ERROR(g.set_initializer(outputs[k], outs[k]));
      ++folded_nodes_;
      changed = true;
    }
    return changed;
  }

  pass::Option<uint64_t> max_bytes_{this, "max-bytes", uint64_t{64} << 20, "largest output (bytes) a folded node may produce"};
  pass::Option<bool> skip_quantizers_{this, "skip-quantizers", false, "1: leave Quant/BipolarQuant/Trunc for a lowering pass (unless they compute another quantizer's parameter)"};
  pass::Statistic skipped_no_kernel_{this, "skipped-no-kernel", "constant nodes without a kernel"};
  pass::Statistic skipped_too_large_{this, "skipped-too-large", "constant nodes over max-bytes"};
  pass::Statistic folded_nodes_{this, "folded-nodes", "nodes evaluated to initializers"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_constants() { return std::make_unique<FoldConstants>(); }

}  // namespace qonnx::passes
