// infer-shapes: ONNX shape inference with the QONNX schemas registered; inferred types of values
// without one are added to value_info. Where inference stops (an op without a schema), says so once.
#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "qonnx/schemas/schemas.h"
#include "qonnx/support/log.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class InferShapes : public pass::Pass {
 public:
  std::string name() const override { return "infer-shapes"; }
  std::string summary() const override {
    return "ONNX shape inference through the QONNX ops; inferred types go to value_info";
  }

  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    auto opset = model.opset("");
    int known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
    if (opset && *opset > known) {
      ctx.warn(nullptr, fmt::format("skipped: the installed ONNX library knows opsets <= {}, the model uses {}", known, *opset));
      return false;
    }
    // ONNX 1.12's inference functions for control flow dereference their subgraph attributes without
    // checking them (a Scan without `body` crashes it; found by fuzzing): such graphs are not inferred.
    for (const auto& n : model.graph().nodes()) {
      if (!ir::is_default_domain(n->domain())) continue;
      const std::string& op = n->op_type();
      std::vector<const char*> needed;
      if (op == "Scan" || op == "Loop") needed = {"body"};
      if (op == "If") needed = {"then_branch", "else_branch"};
      for (const char* attr : needed)
        if (!n->body(attr)) {
          ctx.warn(n.get(), fmt::format("skipped: {} has no graph attribute '{}'", op, attr));
          return false;
        }
    }
    schemas::register_qonnx_schemas();
    // Shape inference reads small constants (Reshape shapes, ...), never the weights.
    QONNX_ASSIGN_OR_RETURN(std::string bytes, io::serialize_structure(model, size_t{1} << 20));
    onnx::ModelProto proto;
    proto.ParseFromString(bytes);
    // Exports often use a QONNX domain without importing it; inference needs the import.
    for (const auto& d : model.unimported_domains()) {
      auto* op = proto.add_opset_import();
      op->set_domain(d);
      op->set_version(1);
    }
    try {
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
      ctx.warn(nullptr, fmt::format("shape inference failed: {}", e.what()));
      return false;
    }
    ir::Graph& g = model.graph();
    bool changed = false;
    // Decide everything first: adding value_info invalidates the graph's type index.
    std::vector<const onnx::ValueInfoProto*> fresh;
    for (const auto& vi : proto.graph().value_info()) {
      const ir::Value* v = g.find_value(vi.name());
      if (v && !g.type_of(v)) fresh.push_back(&vi);
    }
    for (const auto* vi : fresh) {
      g.add_value_info(std::make_unique<onnx::ValueInfoProto>(*vi));
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
