// upgrade-opset{version=N}: raises the default-domain opset with ONNX's version converter, which
// rewrites the nodes whose semantics changed (Unsqueeze/Squeeze axes, Split, Pad, Clip, ...).
// QONNX ops exported into the default domain move to qonnx.custom_op.general first, where the
// converter leaves them alone. Ops whose adapters in ONNX 1.12 need what a real export often lacks
// (Softmax/LogSoftmax/Hardmax 12 -> 13 need the input's rank, BatchNormalization 6 has no shape
// inference for what follows) are parked in a private domain while the converter runs and rewritten
// here afterwards, at the target opset. Shapes are inferred before converting (onnxlib::onnx_convert_version).
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/schemas/schemas.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// Private: no file ever holds it (every parked node is rewritten before the pass returns). The op
// name changes too: ONNX 1.12's converter picks adapters by op name in any domain.
constexpr const char* kParkedDomain = "qonnx-cc.upgrade-opset.parked";
constexpr const char* kParkedPrefix = "Parked";
const char* const kParkedOps[] = {"Softmax", "LogSoftmax", "Hardmax", "BatchNormalization"};

// The IR version each default-domain opset came with (ONNX's versioning table), from opset 9 on.
int64_t ir_version_of_opset(int64_t opset) {
  if (opset >= 15) return 8;
  if (opset >= 12) return 7;
  if (opset == 11) return 6;
  if (opset == 10) return 5;
  return opset == 9 ? 4 : 3;
}

bool is_softmax_family(const std::string& op) { return op == "Softmax" || op == "LogSoftmax" || op == "Hardmax"; }

// Replaces `node` by an `op` node in `domain` with the same name, inputs, attributes and (the first
// `keep_outputs`) output names; returns it.
Result<ir::Node*> replace_node(ir::Graph& g, ir::Node* node, const std::string& op, const std::string& domain,
                               size_t keep_outputs) {
  std::vector<ir::Value*> old_outputs;
  std::vector<std::string> names;
  for (size_t i = 0; i < std::min(keep_outputs, node->outputs().size()); ++i) {
    ir::Value* v = node->output(i);
    names.push_back(v ? v->name() : "");
    old_outputs.push_back(v);
    if (v) QONNX_RETURN_IF_ERROR(g.rename_value(v, g.unique_name(v->name() + "_replaced")));
  }
  QONNX_ASSIGN_OR_RETURN(ir::Node * fresh, g.insert_node(node, node->name(), op, domain, node->inputs(), names));
  fresh->copy_attributes_from(*node);
  std::vector<std::string> stale_infos;
  for (size_t i = 0; i < old_outputs.size(); ++i)
    if (old_outputs[i]) {
      g.replace_all_uses(old_outputs[i], fresh->output(i));
      stale_infos.push_back(old_outputs[i]->name());
    }
  g.remove_node(node);
  g.remove_value_infos(stale_infos);
  return fresh;
}

Status unsupported(const ir::Node& n, int64_t from, int64_t to, const std::string& what) {
  return Status(Code::kUnsupported, fmt::format("{} cannot be converted from opset {} to {}: {}", n.op_type(), from, to, what))
      .with_context(n.describe());
}

// Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D at `axis` (default 1) and
// normalize each row; from 13 on they normalize along `axis` alone. The same where `axis` is the
// last dimension, else Flatten -> op -> Reshape to the input's shape.
Status restore_softmax(ir::Graph& g, ir::Node* n) {
  int64_t axis = n->attr_int("axis", 1);
  ir::Value* x = n->input(0);
  auto type = g.type_of(x);
  int64_t rank = type && type->has_shape ? static_cast<int64_t>(type->dims.size()) : -1;
  std::string op = n->op_type().substr(std::string(kParkedPrefix).size());
  if (rank > 0 && (axis == rank - 1 || axis == -1)) {
    QONNX_ASSIGN_OR_RETURN(ir::Node * fresh, replace_node(g, n, op, "", 1));
    fresh->set_attr_int("axis", -1);
    return Status::ok();
  }
  ir::Value* y = n->output(0);
  std::string y_name = y->name();
  QONNX_RETURN_IF_ERROR(g.rename_value(y, g.unique_name(y_name + "_replaced")));
  std::string base = n->name().empty() ? y_name : n->name();
  QONNX_ASSIGN_OR_RETURN(ir::Node * flatten, g.insert_node(n, g.unique_name(base + "_flatten"), "Flatten", "", {x},
                                                          {g.unique_name(y_name + "_2d")}));
  flatten->set_attr_int("axis", axis);
  QONNX_ASSIGN_OR_RETURN(ir::Node * rows, g.insert_node(n, n->name(), op, "", {flatten->output(0)},
                                                       {g.unique_name(y_name + "_rows")}));
  rows->set_attr_int("axis", 1);
  QONNX_ASSIGN_OR_RETURN(ir::Node * shape, g.insert_node(n, g.unique_name(base + "_shape"), "Shape", "", {x},
                                                        {g.unique_name(y_name + "_shape")}));
  QONNX_ASSIGN_OR_RETURN(ir::Node * reshape, g.insert_node(n, g.unique_name(base + "_reshape"), "Reshape", "",
                                                          {rows->output(0), shape->output(0)}, {y_name}));
  g.replace_all_uses(y, reshape->output(0));
  g.remove_node(n);
  g.remove_value_infos({y->name()});
  return Status::ok();
}

// BatchNormalization 6..8 -> 9+: `is_test`, `spatial` and `consumed_inputs` go; the inference form
// keeps only the first output.
Status restore_batchnorm(ir::Graph& g, ir::Node* n, int64_t from, int64_t to) {
  if (n->attr_int("spatial", 1) != 1)
    return unsupported(*n, from, to, "spatial=0 (per-element statistics) has no equivalent from opset 9 on");
  if (from < 7 && n->attr_int("is_test", 0) == 0)
    return unsupported(*n, from, to, "is_test=0 (training mode) has no inference equivalent from opset 7 on");
  for (size_t i = 1; i < n->outputs().size(); ++i) {
    const ir::Value* v = n->output(i);
    if (v && (!v->uses().empty() || v->is_graph_output()))
      return unsupported(*n, from, to, fmt::format("its training output #{} '{}' is used", i, v->name()));
  }
  QONNX_ASSIGN_OR_RETURN(ir::Node * fresh, replace_node(g, n, "BatchNormalization", "", 1));
  for (const char* attr : {"is_test", "spatial", "consumed_inputs"}) fresh->remove_attr(attr);
  return Status::ok();
}

class UpgradeOpset : public pass::Pass {
 public:
  std::string name() const override { return "upgrade-opset"; }
  std::string summary() const override {
    return "Raise the default-domain opset with ONNX's version converter (never lowers it)";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    int64_t current = model.opset("").value_or(1);
    if (current >= *version_) return false;
    int64_t known = onnxlib::onnx_library_opset();
    if (*version_ > known)
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
    QONNX_RETURN_IF_ERROR(prepare(model, current));
    QONNX_ASSIGN_OR_RETURN(ir::Model converted, onnxlib::onnx_convert_version(model, *version_));
    model = std::move(converted);
    // The converter adds initializers without listing them as inputs, which IR < 4 requires; an
    // upgraded model states the IR version of its opset (initializers that are inputs stay inputs).
    int64_t ir = ir_version_of_opset(*version_);
    if (model.header().ir_version() < ir) model.mutable_header().set_ir_version(ir);
    QONNX_RETURN_IF_ERROR(restore(model, current));
    opset_raised_from_ += current;
    return true;
  }

 private:
  // Default-domain QONNX ops to their own domain; ops converted here to the parking domain.
  Status prepare(ir::Model& model, int64_t current) {
    std::vector<std::string> parked_names;
    for (const char* op : kParkedOps) parked_names.push_back(kParkedPrefix + std::string(op));
    schemas::register_parked_schemas(kParkedDomain, parked_names);
    ir::Graph& g = model.graph();
    std::vector<ir::Node*> todo;
    for (const auto& n : g.nodes()) todo.push_back(n.get());
    bool moved = false, parked = false;
    for (ir::Node* n : todo) {
      if (!ir::is_default_domain(n->domain())) continue;
      const std::string& op = n->op_type();
      if (dialect::classify(n->domain(), op) != dialect::Op::kNone) {
        QONNX_RETURN_IF_ERROR(replace_node(g, n, op, dialect::kGeneralDomain, n->outputs().size()).status());
        moved = true;
      } else if ((is_softmax_family(op) && current < 13 && *version_ >= 13) || (op == "BatchNormalization" && current < 9)) {
        QONNX_RETURN_IF_ERROR(replace_node(g, n, kParkedPrefix + op, kParkedDomain, n->outputs().size()).status());
        parked = true;
      }
    }
    if (moved) model.ensure_import(dialect::kGeneralDomain, 1);
    if (parked) model.ensure_import(kParkedDomain, 1);
    return Status::ok();
  }

  Status restore(ir::Model& model, int64_t current) {
    ir::Graph& g = model.graph();
    std::vector<ir::Node*> parked;
    for (const auto& n : g.nodes())
      if (n->domain() == kParkedDomain) parked.push_back(n.get());
    for (ir::Node* n : parked) {
      if (n->op_type() == kParkedPrefix + std::string("BatchNormalization")) QONNX_RETURN_IF_ERROR(restore_batchnorm(g, n, current, *version_));
      else QONNX_RETURN_IF_ERROR(restore_softmax(g, n));
      ++adapted_here_;
    }
    auto* imports = model.mutable_header().mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i)
      if (imports->Get(i).domain() == kParkedDomain) imports->DeleteSubrange(i, 1);
    return Status::ok();
  }

  pass::Option<int64_t> version_{this, "version", 13, "target opset"};
  pass::Statistic opset_raised_from_{this, "opset-raised-from", "the default-domain opset before the upgrade"};
  pass::Statistic adapted_here_{this, "adapted-here", "nodes converted by this pass rather than ONNX's converter"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_upgrade_opset() { return std::make_unique<UpgradeOpset>(); }

}  // namespace qonnx::passes
