// readable-names: qonnx's GiveUniqueNodeNames + GiveReadableTensorNames on the main graph. Nodes are
// named <op_type>_<k> (k counts per op type in node order); a node's outputs become <node>_out<k>, its
// initializer inputs <node>_param<k> (k counts initializer inputs only; a shared initializer takes the
// name from its last reader); graph inputs become global_in, global_in_1, ..., outputs global_out, ...
// Values of bodies keep their names; a name a body already uses gets a _<n> suffix.
#include <fmt/format.h>

#include "passes/passes.h"

namespace qonnx::passes {
namespace {

bool is_dead(const ir::Value* v) {
  return !v->producer() && v->uses().empty() && !v->is_initializer() && !v->is_graph_input() && !v->is_graph_output();
}

class ReadableNames : public pass::GraphPass {
 public:
  // Main graph only: qonnx's naming covers the main graph; body values keep their names (see the file comment).
  ReadableNames() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "readable-names"; }
  std::string summary() const override {
    return "qonnx's naming: nodes <op>_<k>, tensors <node>_out<k> / <node>_param<k>, global_in / global_out";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    bool changed = false;
    std::map<std::string, int> per_op;
    for (const auto& n : g.nodes()) {
      std::string name = fmt::format("{}_{}", n->op_type(), per_op[n->op_type()]++);
      if (n->name() != name) {
        g.set_node_name(n.get(), name);
        changed = true;
      }
    }
    // Final names, later assignments winning as in qonnx; insertion order kept for determinism.
    std::vector<ir::Value*> order;
    std::map<ir::Value*, std::string> wanted;
    auto want = [&](ir::Value* v, std::string name) {
      if (!v || v->graph() != &g) return;
      if (!wanted.count(v)) order.push_back(v);
      wanted[v] = std::move(name);
    };
    for (const auto& n : g.nodes()) {
      for (size_t k = 0; k < n->outputs().size(); ++k) want(n->output(k), fmt::format("{}_out{}", n->name(), k));
      int params = 0;
      for (ir::Value* v : n->inputs())
        if (v && v->is_initializer()) want(v, fmt::format("{}_param{}", n->name(), params++));
    }
    for (size_t i = 0; i < g.inputs().size(); ++i) want(g.inputs()[i], i == 0 ? "global_in" : fmt::format("global_in_{}", i));
    for (size_t i = 0; i < g.outputs().size(); ++i)
      want(g.outputs()[i], i == 0 ? "global_out" : fmt::format("global_out_{}", i));
    std::vector<ir::Value*> renamed;
    for (ir::Value* v : order)
      if (v->name() != wanted[v]) renamed.push_back(v);
    // Two steps, so that a value can take a name another one gives up.
    for (ir::Value* v : renamed) QONNX_RETURN_IF_ERROR(g.rename_value(v, g.unique_name("qonnx_cc_renaming")));
    for (ir::Value* v : renamed) {
      const std::string& name = wanted[v];
      // Values no node reads or writes any more still hold their names: they give them up.
      if (ir::Value* holder = g.find_value(name); holder && is_dead(holder))
        QONNX_RETURN_IF_ERROR(g.rename_value(holder, g.unique_name(name + "_unused")));
      QONNX_RETURN_IF_ERROR(g.rename_value(v, g.unique_name(name)));
      ++tensors_renamed_;
    }
    return changed || !renamed.empty();
  }

 private:
  pass::Statistic tensors_renamed_{this, "tensors-renamed", "tensors given readable names"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_readable_names() { return std::make_unique<ReadableNames>(); }

}  // namespace qonnx::passes
