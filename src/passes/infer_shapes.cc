// infer-shapes: ONNX shape inference with the QONNX schemas registered; inferred types of values
// without one are added to value_info. Where inference stops (an op without a schema), says so once.
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
    auto opset = model.opset("");
    int64_t known = onnxlib::onnx_library_opset();
    if (opset && *opset > known) {
      ctx.note(nullptr, fmt::format("skipped: the installed ONNX library knows opsets <= {}, the model uses {}", known, *opset));
      return false;
    }
    // A model the checker rejects, or one that crashes the library, is an error; inference that
    // merely gives up is a warning (the graph stays valid, with fewer types).
    auto added = onnxlib::onnx_infer_shapes_into(model);
    if (!added.is_ok() && added.status().code() != Code::kFailed) return std::move(added).status();
    if (!added.is_ok()) {
      ctx.warn(nullptr, added.status().message());
      return false;
    }
    ir::Graph& g = model.graph();
    const bool changed = added.value() > 0;
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
  pass::Statistic types_inferred_{this, "types-inferred", "value types added to value_info"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_infer_shapes() { return std::make_unique<InferShapes>(); }

}  // namespace qonnx::passes
