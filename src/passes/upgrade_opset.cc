// upgrade-opset{version=N}: raises the default-domain opset with ONNX's version converter, which
// rewrites the nodes whose semantics changed (Unsqueeze/Squeeze axes, Split, Softmax axis, ...).
// QONNX ops exported into the default domain move to qonnx.custom_op.general first, where the
// converter leaves them alone.
#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_io.h"
#include "qonnx/schemas/schemas.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class UpgradeOpset : public pass::Pass {
 public:
  std::string name() const override { return "upgrade-opset"; }
  std::string summary() const override {
    return "Raise the default-domain opset with ONNX's version converter (never lowers it)";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    int64_t current = model.opset("").value_or(1);
    if (current >= version_) return false;
    int known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
    if (version_ > known)
      return Status(Code::kUnsupported, fmt::format("the installed ONNX library converts up to opset {}, asked for {}", known, *version_));
    // ONNX 1.12's converter matches these experimental op names in any domain and can loop forever on
    // them (found by fuzzing): refuse instead.
    static const char* const kExperimental[] = {"ATen", "Affine", "ConstantFill", "Crop", "DynamicSlice", "GRUUnit",
                                                "GivenTensorFill", "ImageScaler", "ParametricSoftplus", "Scale",
                                                "ScaledTanh"};
    for (const auto& n : model.graph().nodes())
      for (const char* op : kExperimental)
        if (n->op_type() == op)
          return Status(Code::kUnsupported, fmt::format("the ONNX version converter cannot convert the experimental op "
                                                        "name '{}' (opset {} -> {})", op, current, *version_))
              .with_context(n->describe());
    schemas::register_qonnx_schemas();
    QONNX_ASSIGN_OR_RETURN(std::string bytes, io::serialize_model(model));
    onnx::ModelProto proto;
    proto.ParseFromString(bytes);
    // Default-domain QONNX ops get their proper domain (the executor accepts both).
    bool moved = false;
    for (auto& node : *proto.mutable_graph()->mutable_node())
      if (ir::is_default_domain(node.domain()) && dialect::classify(node.domain(), node.op_type()) != dialect::Op::kNone) {
        node.set_domain(dialect::kGeneralDomain);
        moved = true;
      }
    if (moved && !model.opset(dialect::kGeneralDomain)) {
      auto* op = proto.add_opset_import();
      op->set_domain(dialect::kGeneralDomain);
      op->set_version(1);
    }
    for (const auto& d : model.unimported_domains()) {
      auto* op = proto.add_opset_import();
      op->set_domain(d);
      op->set_version(1);
    }
    onnx::ModelProto converted;
    try {
      converted = onnx::version_conversion::ConvertVersion(proto, static_cast<int>(*version_));
    } catch (const std::exception& e) {
      return Status(Code::kUnsupported, fmt::format("ONNX version converter {} -> {}: {}", current, *version_, e.what()));
    }
    std::string out;
    converted.SerializeToString(&out);
    auto reloaded = io::load_model_from_bytes(out, model.source_path().has_parent_path() ? model.source_path().parent_path() : ".");
    if (!reloaded.is_ok()) return std::move(reloaded).status().with_context("after the ONNX version converter");
    reloaded->set_source_path(model.source_path());
    model = std::move(reloaded).value();
    opset_raised_from_ += current;
    return true;
  }

 private:
  pass::Option<int64_t> version_{this, "version", 13, "target opset"};
  pass::Statistic opset_raised_from_{this, "opset-raised-from", "the default-domain opset before the upgrade"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_upgrade_opset() { return std::make_unique<UpgradeOpset>(); }

}  // namespace qonnx::passes
