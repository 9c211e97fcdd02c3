// freeze-initializer-inputs: initializers that are also listed as graph inputs (the IR < 4 convention,
// kept by many exporters) become plain constants, as onnxruntime treats them, and leave the graph
// inputs. With keep=1 they stay overridable, and no pass folds or lowers through them.

#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class FreezeInitializerInputs : public pass::GraphPass {
 public:
  // Main graph only: body inputs are positional (Loop/Scan/If signatures): none may be dropped.
  FreezeInitializerInputs() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "freeze-initializer-inputs"; }
  std::string summary() const override {
    return "Initializers also listed as graph inputs become constants (dropped from the graph inputs), as "
           "onnxruntime treats them";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Value*> overridable;
    for (ir::Value* v : g.inputs())
      if (v->is_initializer()) overridable.push_back(v);
    if (overridable.empty()) return false;
    if (*keep_) {
      kept_overridable_ += static_cast<int64_t>(overridable.size());
      return false;
    }
    for (ir::Value* v : overridable) g.remove_graph_input(v);
    // IR < 4 requires every initializer to be a graph input (ONNX's checker and version converter
    // reject the model otherwise); IR 4 is the first to allow plain constants.
    if (model.ir_version() < 4) model.set_ir_version(4);
    frozen_ += static_cast<int64_t>(overridable.size());
    return true;
  }

 private:
  pass::Option<bool> keep_{this, "keep", false,
                           "1: keep them graph inputs, overridable at run time (passes then treat them as variables)"};
  pass::Statistic frozen_{this, "frozen", "initializers dropped from the graph inputs"};
  pass::Statistic kept_overridable_{this, "kept-overridable", "initializers kept as overridable graph inputs"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_freeze_initializer_inputs() { return std::make_unique<FreezeInitializerInputs>(); }

}  // namespace qonnx::passes
