// upgrade-opset{version=N}: raises the default-domain opset with ONNX's version converter, which
// rewrites the nodes whose semantics changed (Unsqueeze/Squeeze axes, Split, Pad, Clip, ...), up to
// the newest opset the installed library knows (17 for ONNX 1.12); above it qonnx-cc's own adapters
// take each step (docs/opset18-21.md lists every op that changed in 18..21 and what happens to it).
// QONNX ops exported into the default domain move to qonnx.custom_op.general first, where the
// converter leaves them alone. Ops whose adapters in ONNX 1.12 need what a real export often lacks
// (Softmax/LogSoftmax/Hardmax 12 -> 13 need the input's rank, BatchNormalization 6 has no shape
// inference for what follows) are parked in a private domain while the converter runs and rewritten
// here afterwards, at the target opset. Shapes are inferred before converting (onnxlib::onnx_convert_version).
#include <algorithm>

#include <fmt/format.h>

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
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
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
  QONNX_ASSIGN_OR_RETURN_CTX(const int64_t axis, n->attr<int64_t>("axis", 1), n->describe());
  ir::Value* x = n->input(0);
  auto type = g.type_of(x);
  int64_t rank = type && type->has_shape ? static_cast<int64_t>(type->dims.size()) : -1;
  std::string op = n->op_type().substr(std::string(kParkedPrefix).size());
  if (rank > 0 && (axis == rank - 1 || axis == -1)) {
    QONNX_ASSIGN_OR_RETURN(ir::Node * fresh, replace_node(g, n, op, "", 1));
    fresh->set_attr("axis", -1);
    return Status::ok();
  }
  ir::Value* y = n->output(0);
  std::string y_name = y->name();
  QONNX_RETURN_IF_ERROR(g.rename_value(y, g.unique_name(y_name + "_replaced")));
  std::string base = n->name().empty() ? y_name : n->name();
  QONNX_ASSIGN_OR_RETURN(ir::Node * flatten, g.insert_node(n, g.unique_name(base + "_flatten"), "Flatten", "", {x},
                                                          {g.unique_name(y_name + "_2d")}));
  flatten->set_attr("axis", axis);
  QONNX_ASSIGN_OR_RETURN(ir::Node * rows, g.insert_node(n, n->name(), op, "", {flatten->output(0)},
                                                       {g.unique_name(y_name + "_rows")}));
  rows->set_attr("axis", 1);
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
  QONNX_ASSIGN_OR_RETURN_CTX(const int64_t spatial, n->attr<int64_t>("spatial", 1), n->describe());
  if (spatial != 1)
    return unsupported(*n, from, to, "spatial=0 (per-element statistics) has no equivalent from opset 9 on");
  QONNX_ASSIGN_OR_RETURN_CTX(const int64_t is_test, n->attr<int64_t>("is_test", 0), n->describe());
  if (from < 7 && is_test == 0)
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

// ---- Above the installed library: qonnx-cc's own adapters, one opset step at a time ----------------

// A fresh 1-D int64 initializer "<node>_<suffix>" in the node's graph.
Result<ir::Value*> int64_constant(ir::Graph& g, const ir::Node& n, const std::string& suffix, const std::vector<int64_t>& values) {
  Tensor t(DType::kInt64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  const std::string base = n.name().empty() ? (n.output(0) ? n.output(0)->name() : n.op_type()) : n.name();
  return g.add_initializer_tensor(g.unique_name(base + "_" + suffix), t);
}

// A fresh node before `before` with one output "<before's base>_<suffix>".
Result<ir::Value*> emit(ir::Graph& g, const ir::Node& before, const std::string& suffix, const std::string& op,
                        const std::vector<ir::Value*>& inputs) {
  const std::string base = before.name().empty() ? before.op_type() : before.name();
  QONNX_ASSIGN_OR_RETURN(ir::Node * n, g.insert_node(&before, g.unique_name(base + "_" + suffix), op, "", inputs,
                                                     {g.unique_name(base + "_" + suffix)}));
  return n->output(0);
}

// Reduce*-18 (all but ReduceSum, which moved at 13): `axes` moves from attribute to int64 input #1.
Status axes_attribute_to_input(ir::Graph& g, ir::Node* n) {
  if (!n->has_attr("axes")) return Status::ok();  // no axes: all of them, in both forms
  QONNX_ASSIGN_OR_RETURN(ir::Value * axes, int64_constant(g, *n, "axes", n->attr_ints("axes")));
  g.set_node_input(n, 1, axes);
  n->remove_attr("axes");
  return Status::ok();
}

// Split-18: without the `split` input the op needs `num_outputs` (opset 13 split evenly by the
// number of outputs).
Status split_num_outputs(ir::Graph&, ir::Node* n) {
  if (n->input(1) == nullptr && !n->has_attr("num_outputs"))
    n->set_attr("num_outputs", static_cast<int64_t>(n->outputs().size()));
  return Status::ok();
}

// GridSample-20: the modes are named for any rank ("linear", "cubic"); "nearest" stays.
Status grid_sample_mode_names(ir::Graph&, ir::Node* n) {
  const std::string mode = n->attr_string("mode", "bilinear");
  n->set_attr("mode", mode == "bilinear" ? "linear" : mode == "bicubic" ? "cubic" : mode);
  return Status::ok();
}

// DFT-20: `axis` (default 1) moves from attribute to input #2, whose default is -2: always given.
Status dft_axis_to_input(ir::Graph& g, ir::Node* n) {
  QONNX_ASSIGN_OR_RETURN(const int64_t axis_attr, n->attr<int64_t>("axis", 1));
  QONNX_ASSIGN_OR_RETURN(ir::Value * axis, int64_constant(g, *n, "axis", {axis_attr}));
  QONNX_ASSIGN_OR_RETURN(ir::Value * scalar, emit(g, *n, "axis_scalar", "Squeeze", {axis}));
  g.set_node_input(n, 2, scalar);
  n->remove_attr("axis");
  return Status::ok();
}

// GroupNormalization-21: `scale` and `bias` hold one value per channel instead of one per group:
// each group's value repeats C / num_groups times (computed from X's shape, folded when it is known).
Status group_norm_per_channel(ir::Graph& g, ir::Node* n) {
  if (!n->has_attr("num_groups"))
    return Status(Code::kUnsupported, "cannot spread scale and bias over the channels: the required attribute 'num_groups' is missing");
  QONNX_ASSIGN_OR_RETURN(const int64_t groups, n->attr<int64_t>("num_groups"));
  QONNX_ASSIGN_OR_RETURN(ir::Value * groups_1d, int64_constant(g, *n, "num_groups", {groups}));
  QONNX_ASSIGN_OR_RETURN(ir::Value * column, int64_constant(g, *n, "group_column", {groups, 1}));
  QONNX_ASSIGN_OR_RETURN(ir::Value * flat, int64_constant(g, *n, "per_channel", {-1}));
  QONNX_ASSIGN_OR_RETURN(ir::Value * x_shape, emit(g, *n, "x_shape", "Shape", {n->input(0)}));
  ir::Node* shape_node = x_shape->producer();
  shape_node->set_attr("start", 1);
  shape_node->set_attr("end", 2);
  QONNX_ASSIGN_OR_RETURN(ir::Value * per_group, emit(g, *n, "channels_per_group", "Div", {x_shape, groups_1d}));
  QONNX_ASSIGN_OR_RETURN(ir::Value * grid, emit(g, *n, "group_grid", "Concat", {groups_1d, per_group}));
  grid->producer()->set_attr("axis", 0);
  for (size_t i : {size_t{1}, size_t{2}}) {
    const std::string what = i == 1 ? "scale" : "bias";
    if (!n->input(i)) return Status(Code::kUnsupported, fmt::format("the required input '{}' is missing", what));
    QONNX_ASSIGN_OR_RETURN(ir::Value * col, emit(g, *n, what + "_column", "Reshape", {n->input(i), column}));
    QONNX_ASSIGN_OR_RETURN(ir::Value * spread, emit(g, *n, what + "_spread", "Expand", {col, grid}));
    QONNX_ASSIGN_OR_RETURN(ir::Value * per_channel, emit(g, *n, what + "_per_channel", "Reshape", {spread, flat}));
    g.set_node_input(n, i, per_channel);
  }
  return Status::ok();
}

// The default-domain ops whose signature or meaning changed at opset `to` in a way a node must be
// rewritten for; every other op of opsets 18..21 moves as it is (new types, new attributes with
// the old behaviour as default).
struct OwnAdapter {
  const char* op;
  int64_t to;
  Status (*adapt)(ir::Graph&, ir::Node*);
};
constexpr OwnAdapter kOwnAdapters[] = {
    {"ReduceL1", 18, axes_attribute_to_input},        {"ReduceL2", 18, axes_attribute_to_input},
    {"ReduceLogSum", 18, axes_attribute_to_input},    {"ReduceLogSumExp", 18, axes_attribute_to_input},
    {"ReduceMax", 18, axes_attribute_to_input},       {"ReduceMean", 18, axes_attribute_to_input},
    {"ReduceMin", 18, axes_attribute_to_input},       {"ReduceProd", 18, axes_attribute_to_input},
    {"ReduceSumSquare", 18, axes_attribute_to_input}, {"Split", 18, split_num_outputs},
    {"GridSample", 20, grid_sample_mode_names},       {"DFT", 20, dft_axis_to_input},
    {"GroupNormalization", 21, group_norm_per_channel},
};

// The newest opset upgrade-opset reaches (the adapters above cover every op that changed up to it).
constexpr int64_t kNewestOwnAdapterOpset = 21;

// Raises every graph's default-domain nodes from `from` to `to` (both at least the library's opset).
Result<int64_t> adapt_above_library(ir::Model& model, int64_t from, int64_t to) {
  int64_t adapted = 0;
  Status status = Status::ok();
  for (int64_t step = from + 1; step <= to && status.is_ok(); ++step) {
    model.graph().visit_graphs([&](ir::Graph& g) {
      std::vector<std::pair<ir::Node*, const OwnAdapter*>> todo;
      for (const auto& n : g.nodes())
        if (ir::is_default_domain(n->domain()))
          for (const OwnAdapter& a : kOwnAdapters)
            if (a.to == step && n->op_type() == a.op) todo.emplace_back(n.get(), &a);
      for (const auto& [n, a] : todo) {
        if (!status.is_ok()) return;
        status = a->adapt(g, n);
        if (!status.is_ok()) status.with_context(fmt::format("{}, opset {} -> {}", n->describe(), step - 1, step));
        ++adapted;
      }
    });
  }
  QONNX_RETURN_IF_ERROR(status);
  model.set_import_version("", to);
  return adapted;
}

// A model pass: the opset import is model-wide (the adapters visit the bodies themselves).
class UpgradeOpset : public pass::Pass {
 public:
  std::string name() const override { return "upgrade-opset"; }
  std::string summary() const override {
    return "Raise the default-domain opset: ONNX's version converter up to its newest opset, qonnx-cc's own "
           "adapters above (never lowers it)";
  }
  Result<bool> run(ir::Model& model, pass::PassContext& ctx) override {
    int64_t current = model.opset("").value_or(1);
    if (current > *version_) {
      ctx.note(nullptr, fmt::format("the model's default-domain opset {} is above the target {}: kept (never lowered)",
                                    current, *version_));
      return false;
    }
    if (current == *version_) return false;
    if (*version_ > kNewestOwnAdapterOpset)
      return Status(Code::kUnsupported, fmt::format("upgrade-opset converts up to opset {}, asked for {}", kNewestOwnAdapterOpset, *version_));
    const int64_t known = onnxlib::onnx_library_opset();
    if (current < known) QONNX_RETURN_IF_ERROR(convert_with_library(model, current, std::min(*version_, known)));
    if (*version_ > known) {
      QONNX_ASSIGN_OR_RETURN(int64_t adapted, adapt_above_library(model, std::max(current, known), *version_));
      adapted_here_ += adapted;
    }
    // The converter adds initializers without listing them as inputs, which IR < 4 requires; an
    // upgraded model states the IR version of its opset (initializers that are inputs stay inputs).
    int64_t ir = ir_version_of_opset(*version_);
    if (model.ir_version() < ir) model.set_ir_version(ir);
    opset_versions_raised_ += *version_ - current;
    return true;
  }

 private:
  Status convert_with_library(ir::Model& model, int64_t current, int64_t to) {
    // ONNX 1.12's converter matches these experimental op names in any domain and can loop forever on
    // them (found by fuzzing): refuse instead.
    static const char* const kExperimental[] = {"ATen", "Affine", "ConstantFill", "Crop", "DynamicSlice", "GRUUnit",
                                                "GivenTensorFill", "ImageScaler", "ParametricSoftplus", "Scale",
                                                "ScaledTanh"};
    for (const auto& n : model.graph().nodes())
      for (const char* op : kExperimental)
        if (n->op_type() == op)
          return Status(Code::kUnsupported, fmt::format("the ONNX version converter cannot convert the experimental op "
                                                        "name '{}' (opset {} -> {})", op, current, to))
              .with_context(n->describe());
    QONNX_RETURN_IF_ERROR(prepare(model, current, to));
    QONNX_ASSIGN_OR_RETURN(ir::Model converted, onnxlib::onnx_convert_version(model, to));
    model = std::move(converted);
    return restore(model, current, to);
  }

  // Default-domain QONNX ops to their own domain; ops converted here to the parking domain.
  Status prepare(ir::Model& model, int64_t current, int64_t to) {
    std::vector<std::string> parked_names;
    for (const char* op : kParkedOps) parked_names.push_back(kParkedPrefix + std::string(op));
    // ONNX 1.12's converter looks every node's op name up among all schemas, whatever its domain, and
    // stops (unordered_map::at) at a name it has none for: an op of another domain (a user's custom op)
    // gets a stub under that name in the parking domain, which no node uses (the converter adapts
    // default-domain ops only).
    model.graph().visit_graphs([&](const ir::Graph& graph) {
      for (const auto& n : graph.nodes())
        if (!ir::is_default_domain(n->domain())) parked_names.push_back(n->op_type());
    });
    std::sort(parked_names.begin(), parked_names.end());
    parked_names.erase(std::unique(parked_names.begin(), parked_names.end()), parked_names.end());
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
      } else if ((is_softmax_family(op) && current < 13 && to >= 13) || (op == "BatchNormalization" && current < 9)) {
        QONNX_RETURN_IF_ERROR(replace_node(g, n, kParkedPrefix + op, kParkedDomain, n->outputs().size()).status());
        parked = true;
      }
    }
    if (moved) model.ensure_import(dialect::kGeneralDomain, 1);
    if (parked) model.ensure_import(kParkedDomain, 1);
    return Status::ok();
  }

  Status restore(ir::Model& model, int64_t current, int64_t to) {
    ir::Graph& g = model.graph();
    std::vector<ir::Node*> parked;
    for (const auto& n : g.nodes())
      if (n->domain() == kParkedDomain) parked.push_back(n.get());
    for (ir::Node* n : parked) {
      if (n->op_type() == kParkedPrefix + std::string("BatchNormalization")) QONNX_RETURN_IF_ERROR(restore_batchnorm(g, n, current, to));
      else QONNX_RETURN_IF_ERROR(restore_softmax(g, n));
      ++adapted_here_;
    }
    model.remove_import(kParkedDomain);
    return Status::ok();
  }

  pass::Option<int64_t> version_{this, "version", 13, "target opset"};
  // A difference, not the starting opset: counters add up over the instances of a pipeline (an opset-21
  // target runs this pass twice, to the library's opset and then above it).
  pass::Statistic opset_versions_raised_{this, "opset-versions-raised", "default-domain opset versions added"};
  pass::Statistic adapted_here_{this, "adapted-here", "nodes converted by this pass rather than ONNX's converter"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_upgrade_opset() { return std::make_unique<UpgradeOpset>(); }

}  // namespace qonnx::passes
