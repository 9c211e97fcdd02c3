// infer-shapes: ONNX shape inference with the QONNX schemas registered; inferred types of values
// without one are added to value_info. Where inference stops (an op without a schema), says so once.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "qonnx/exec/executor.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/support/log.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

bool fully_known(const ir::TypeInfo& t) {
  if (!t.has_shape) return false;
  for (int64_t d : t.dims)
    if (d < 0) return false;
  return true;
}

bool fully_known(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return false;
  for (const auto& d : t.tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

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
    auto inferred = onnxlib::onnx_infer_shapes(model);
    if (!inferred.is_ok() && inferred.status().code() != Code::kFailed) return std::move(inferred).status();
    if (!inferred.is_ok()) {
      ctx.warn(nullptr, inferred.status().message());
      return false;
    }
    ir::Graph& g = model.graph();
    bool changed = false;
    // Decide everything first: adding value_info invalidates the graph's type index.
    std::vector<std::unique_ptr<onnx::ValueInfoProto>> fresh;
    std::vector<std::string> refined;
    for (auto& vi : inferred.value()) {
      const ir::Value* v = g.find_value(vi->name());
      if (!v) continue;
      auto known = g.type_of(v);
      // A value_info without a full shape (e.g. a Reshape's output before its target was folded) gives
      // way to an inferred full shape; graph inputs and outputs keep what they declare.
      const bool refine = known && !v->is_graph_input() && !v->is_graph_output() && !fully_known(*known) &&
                          fully_known(vi->type());
      if (refine) refined.push_back(vi->name());
      if (!known || refine) fresh.push_back(std::move(vi));
    }
    g.remove_value_infos(refined);
    for (auto& vi : fresh) {
      g.add_value_info(std::move(vi));
      ++types_inferred_;
      changed = true;
    }
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
