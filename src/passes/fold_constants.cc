// fold-constants: evaluates every node whose inputs are all constant with the registry kernels, in
// one topological sweep (a folded output makes its consumers foldable in the same sweep).
#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "passes/passes.h"

namespace qonnx::passes {

bool is_constant(const ir::Value* v, bool include_overridable) {
  return v && v->is_initializer() && (include_overridable || !v->is_graph_input());
}

std::optional<std::vector<Tensor>> constant_inputs(const ir::Graph& graph, const ir::Node& node,
                                                   bool include_overridable) {
  std::vector<Tensor> out;
  for (const ir::Value* v : node.inputs()) {
    if (!v) {
      out.emplace_back();
      continue;
    }
    if (!is_constant(v, include_overridable)) return std::nullopt;
    auto t = graph.initializer_tensor(v);
    if (!t.is_ok()) return std::nullopt;
    out.push_back(std::move(t).value());
  }
  return out;
}

namespace {

bool never_folded(const ir::Node& node) {
  static const char* const kOps[] = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                                     "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                     "Multinomial", "Bernoulli", "If", "Loop", "Scan"};
  if (!ir::is_default_domain(node.domain())) return false;
  for (const char* op : kOps)
    if (node.op_type() == op) return true;
  return false;
}

class FoldConstants : public pass::Pass {
 public:
  std::string name() const override { return "fold-constants"; }
  std::string summary() const override {
    return "Evaluate nodes whose inputs are all constant (never QuantizeLinear/DequantizeLinear or random ops)";
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
      if (skip_quantizers_ && dialect::is_quantizer(*node)) continue;
      auto inputs = constant_inputs(g, *node, /*include_overridable=*/false);
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
      if (bytes > max_bytes_) {
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
  pass::Option<bool> skip_quantizers_{this, "skip-quantizers", false, "1: leave Quant/BipolarQuant/Trunc for a lowering pass"};
  pass::Statistic skipped_no_kernel_{this, "skipped-no-kernel", "constant nodes without a kernel"};
  pass::Statistic skipped_too_large_{this, "skipped-too-large", "constant nodes over max-bytes"};
  pass::Statistic folded_nodes_{this, "folded-nodes", "nodes evaluated to initializers"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_constants() { return std::make_unique<FoldConstants>(); }

}  // namespace qonnx::passes
