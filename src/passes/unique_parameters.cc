// unique-parameters: qonnx's GiveUniqueParameterTensors. An initializer read by several node inputs
// gets a copy for every read after the first (in node order), with its finn_datatype, so a later pass
// that rewrites one node's parameter (folding a Transpose, extracting a bias) never changes another's.
#include <set>

#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class UniqueParameters : public pass::GraphPass {
 public:
  std::string name() const override { return "unique-parameters"; }
  std::string summary() const override {
    return "Give every node input its own initializer (copies of shared parameter tensors)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::set<const ir::Value*> seen;
    bool changed = false;
    for (const auto& n : g.nodes()) {
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        ir::Value* v = n->input(i);
        // Initializers of enclosing graphs are shared with the body by design: left alone.
        // An overridable initializer (also a graph input) is one tensor a caller may replace: kept shared.
        if (!v || !v->is_initializer() || v->is_graph_input() || v->graph() != &g) continue;
        if (seen.insert(v).second) continue;
        QONNX_ASSIGN_OR_RETURN(Tensor t, g.initializer_tensor(v));
        QONNX_ASSIGN_OR_RETURN(ir::Value* copy, g.add_initializer_tensor(g.unique_name(v->name() + "_copy"), t));
        if (std::string dt = g.finn_datatype(v->name()); !dt.empty()) g.set_finn_datatype(copy->name(), dt);
        g.set_node_input(n.get(), i, copy);
        ++copies_;
        changed = true;
      }
    }
    return changed;
  }

 private:
  pass::Statistic copies_{this, "copies", "parameter tensors duplicated"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_unique_parameters() { return std::make_unique<UniqueParameters>(); }

}  // namespace qonnx::passes
