// fold-constants: evaluates every node whose inputs are all constant with the registry kernels, in
// one topological sweep (a folded output makes its consumers foldable in the same sweep).
#include <algorithm>

#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
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
bool kept_by_default(const ir::Node& node, bool skip_quantizers, bool fold_qdq) {
  if (skip_quantizers && dialect::is_quantizer(node)) return true;
  if (fold_qdq) return false;
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

class FoldConstants : public pass::GraphPass {
 public:
  std::string name() const override { return "fold-constants"; }
  std::string summary() const override {
    return "Evaluate nodes whose inputs are all constant (never random ops; QuantizeLinear/DequantizeLinear only "
           "where they compute a quantizer parameter)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    return fold(model, g, ctx);
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
      if (!parameter && kept_by_default(*node, skip_quantizers_, fold_qdq_)) continue;
      if (*shapes_ && fold_static_shape(g, node)) {
        changed = true;
        continue;
      }
      auto inputs = constant_inputs(g, *node);
      if (!inputs) continue;
      if (!ctx.registry().find(node->domain(), node->op_type(), model.op_version(node->domain()))) {
        ++skipped_no_kernel_;
        continue;
      }
      std::vector<const Tensor*> ptrs;
      for (const auto& t : *inputs) ptrs.push_back(t.defined() ? &t : nullptr);
      QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, ptrs, ctx.registry()));
      // Sequence and optional values have no initializer form: they stay computed.
      if (std::any_of(outs.begin(), outs.end(), [](const Tensor& t) { return t.defined() && !t.is_tensor(); })) continue;
      size_t bytes = 0;
      for (const auto& t : outs) bytes += t.nbytes();
      if (bytes > max_bytes_ && !parameter) {
        ++skipped_too_large_;
        continue;
      }
      if (dialect::is_quantizer(*node)) record_outcome(ctx, *node, "folded", "constant inputs, evaluated to a float initializer");
      std::vector<ir::Value*> outputs = node->outputs();
      g.remove_node(node);
      for (size_t k = 0; k < outputs.size(); ++k)
        if (outputs[k]) QONNX_RETURN_IF_ERROR(g.set_initializer(outputs[k], outs[k]));
      ++folded_nodes_;
      changed = true;
    }
    return changed;
  }

  // Shape of a value whose declared shape is fully known (qonnx folds these too).
  bool fold_static_shape(ir::Graph& g, ir::Node* node) {
    if (node->op_type() != "Shape" || !ir::is_default_domain(node->domain()) || !node->input(0) || !node->output(0))
      return false;
    Dims dims;
    if (const ir::Initializer* init = g.initializer(node->input(0))) {
      dims = init->dims();
    } else {
      auto type = g.type_of(node->input(0));
      if (!type || !type->has_shape) return false;
      dims = type->dims;
    }
    for (int64_t d : dims)
      if (d < 0) return false;
    // Shape-15 start/end select a slice of the dims (negative counts from the end, clamped).
    const auto rank = static_cast<int64_t>(dims.size());
    auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
    // A mistyped start/end is not folded: the Shape kernel reports it.
    auto start_attr = node->attr<int64_t>("start", 0), end_attr = node->attr<int64_t>("end", rank);
    if (!start_attr.is_ok() || !end_attr.is_ok()) return false;
    const int64_t start = clamp(start_attr.value()), end = clamp(end_attr.value());
    Tensor shape(DType::kInt64, {std::max<int64_t>(0, end - start)});
    for (int64_t i = start; i < end; ++i) shape.data<int64_t>()[i - start] = dims[static_cast<size_t>(i)];
    ir::Value* out = node->output(0);
    g.remove_node(node);
    if (!g.set_initializer(out, shape).is_ok()) return false;
    ++folded_shapes_;
    return true;
  }

  pass::Option<uint64_t> max_bytes_{this, "max-bytes", uint64_t{64} << 20, "largest output (bytes) a folded node may produce"};
  pass::Option<bool> skip_quantizers_{this, "skip-quantizers", false, "1: leave Quant/BipolarQuant/Trunc for a lowering pass (unless they compute another quantizer's parameter)"};
  pass::Option<bool> fold_qdq_{this, "qdq", false, "1: fold QuantizeLinear/DequantizeLinear of constants too (float weights)"};
  pass::Option<bool> shapes_{this, "shapes", false, "1: fold Shape of values whose declared shape is fully known"};
  pass::Statistic folded_shapes_{this, "folded-shapes", "Shape nodes of statically shaped values folded"};
  pass::Statistic skipped_no_kernel_{this, "skipped-no-kernel", "constant nodes without a kernel"};
  pass::Statistic skipped_too_large_{this, "skipped-too-large", "constant nodes over max-bytes"};
  pass::Statistic folded_nodes_{this, "folded-nodes", "nodes evaluated to initializers"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_constants() { return std::make_unique<FoldConstants>(); }

}  // namespace qonnx::passes
