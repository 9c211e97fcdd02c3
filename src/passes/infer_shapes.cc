// infer-shapes: ONNX shape inference with the QONNX schemas registered; inferred types of values
// without one are added to value_info. Where inference stops (an op without a schema), says so once.
#include <algorithm>

#include <fmt/format.h>

#include "qonnx/exec/executor.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/support/log.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// A model pass: ONNX shape inference runs on the whole model at once; its answer types the main graph.
class InferShapes : public pass::Pass {
 public:
  std::string name() const override { return "infer-shapes"; }
  std::string summary() const override {
    return "ONNX shape inference through the QONNX ops; inferred types go to value_info";
  }

  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    const bool declared = initializers_ && declare_initializers(model.graph());
    auto opset = model.opset("");
    int64_t known = onnxlib::onnx_library_opset();
    if (opset && *opset > known) {
      ctx.note(nullptr, fmt::format("skipped: the installed ONNX library knows opsets <= {}, the model uses {}", known, *opset));
      return declared;
    }
    // A model the checker rejects, or one that crashes the library, is an error; inference that
    // merely gives up is a warning (the graph stays valid, with fewer types).
    auto added = onnxlib::onnx_infer_shapes_into(model);
    if (!added.is_ok() && added.status().code() != Code::kFailed) return std::move(added).status();
    if (!added.is_ok()) {
      ctx.warn(nullptr, added.status().message());
      return declared;
    }
    ir::Graph& g = model.graph();
    const bool changed = added.value() > 0 || declared;
    types_inferred_ += added.value();
    QONNX_ASSIGN_OR_RETURN(auto order, exec::topological_order(g));
    for (const ir::Node* n : order) {
      for (const ir::Value* v : n->outputs()) {
        if (v && !g.type_of(v)) {
          ctx.warn(n, fmt::format("shape inference stops here: no type inferred for '{}'", v->name()));
          return changed;
        }
      }
    }
    return changed;
  }

 private:
  // value_info entries for the initializers nodes read (ONNX's inference adds none for them).
  bool declare_initializers(ir::Graph& g) {
    std::vector<const ir::Value*> undeclared;
    for (const auto& n : g.nodes())
      for (const ir::Value* v : n->inputs())
        if (v && v->is_initializer() && v->graph() == &g && !g.type_of(v) &&
            std::find(undeclared.begin(), undeclared.end(), v) == undeclared.end())
          undeclared.push_back(v);
    for (const ir::Value* v : undeclared) {
      const ir::Initializer* init = g.initializer(v);
      g.add_value_info(v->name(), init->dtype(), init->dims());
    }
    initializers_declared_ += static_cast<int64_t>(undeclared.size());
    return !undeclared.empty();
  }

  pass::Option<bool> initializers_{this, "initializers", false,
                                   "1: also declare the type and shape of every initializer a node reads in value_info "
                                   "(qonnx's set_initializer does; hls4ml looks every input's shape up there)"};
  pass::Statistic initializers_declared_{this, "initializers-declared", "initializers given a value_info entry"};
  pass::Statistic types_inferred_{this, "types-inferred", "value types added to value_info"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_infer_shapes() { return std::make_unique<InferShapes>(); }

}  // namespace qonnx::passes
