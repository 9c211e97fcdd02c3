// remove-identity-ops: qonnx's RemoveIdentityOps, exact removals only (qonnx compares with atol 1e-5,
// so it also drops x * 1.00001). Removed: Add of an all-zero constant (either side), Sub of one (as the
// subtrahend), Mul by an all-one constant (either side), Div by one (as the divisor), Pad with all-zero
// pads, Identity, and Dropout in inference (training_mode absent or false, or ratio 0; mask unused).
// A constant stays when broadcasting it could change the output's shape (its rank is above the data's,
// or a dim above 1 is not the data's known dim). x + 0 turns -0 into +0, which compares equal to 0
// (SEMANTICS.md); everything else returns its input unchanged, bit for bit.
// A removed node's graph output keeps its name: the producer of the node's input writes it instead; when
// the input is a graph input, an initializer, an outer value or read elsewhere, the node stays.
#include "qonnx/exec/dtype_dispatch.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class RemoveIdentityOps : public pass::GraphPass {
 public:
  std::string name() const override { return "remove-identity-ops"; }
  std::string summary() const override {
    return "Remove Add/Sub of 0, Mul/Div by 1, zero Pad, Identity and inference Dropout, exactly (qonnx's "
           "RemoveIdentityOps without its atol; x + 0 maps -0 to +0)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    const int64_t opset = model.opset("").value_or(1);
    bool changed = false;
    for (ir::Node* n : nodes) {
      if (!ir::is_default_domain(n->domain()) || !n->output(0)) continue;
      QONNX_ASSIGN_OR_RETURN(const int data_input, identity_input(g, *n, opset));
      if (data_input < 0 || !n->input(static_cast<size_t>(data_input))) continue;
      QONNX_ASSIGN_OR_RETURN(bool removed, bypass(g, n, n->input(static_cast<size_t>(data_input))));
      if (removed) ++removed_;
      else ++kept_for_output_;
      changed |= removed;
    }
    return changed;
  }

 private:
  // Every element of the constant `v` equals `value`.
  static bool constant_all(const ir::Graph& g, const ir::Value* v, double value) {
    if (!is_constant(v)) return false;
    auto t = g.initializer_tensor(v);
    if (!t.is_ok() || t->dtype() == DType::kString || t->dtype() == DType::kBool || t->numel() == 0) return false;
    for (int64_t i = 0; i < t->numel(); ++i)
      if (exec::element_as_double(t.value(), i) != value) return false;
    return true;
  }

  // Broadcasting `c` against `data` gives data's shape.
  static bool broadcast_keeps_shape(const ir::Graph& g, const ir::Value* data, const ir::Value* c) {
    const auto cd = g.dims_of(c);
    if (!cd) return false;
    if (cd->empty()) return true;
    const auto dd = g.dims_of(data);
    if (!dd || cd->size() > dd->size()) return false;
    for (size_t k = 0; k < cd->size(); ++k) {
      const int64_t cdim = (*cd)[cd->size() - 1 - k], ddim = (*dd)[dd->size() - 1 - k];
      if (cdim != 1 && cdim != ddim) return false;
    }
    return true;
  }

  // The input the node returns unchanged, or -1.
  static Result<int> identity_input(const ir::Graph& g, const ir::Node& n, int64_t opset) {
    const std::string& op = n.op_type();
    auto neutral_at = [&](size_t data, size_t c, double value) {
      return constant_all(g, n.input(c), value) && broadcast_keeps_shape(g, n.input(data), n.input(c));
    };
    if (op == "Add" || op == "Mul") {
      const double neutral = op == "Add" ? 0.0 : 1.0;
      if (neutral_at(0, 1, neutral)) return 0;
      if (neutral_at(1, 0, neutral)) return 1;
      return -1;
    }
    if (op == "Sub" || op == "Div") return neutral_at(0, 1, op == "Sub" ? 0.0 : 1.0) ? 0 : -1;
    if (op == "Identity") return 0;
    if (op == "Pad") {
      if (opset >= 11) return constant_all(g, n.input(1), 0.0) ? 0 : -1;
      QONNX_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, n.attr<std::vector<int64_t>>(opset < 2 ? "paddings" : "pads"));
      for (int64_t p : pads)
        if (p != 0) return -1;
      return 0;
    }
    if (op == "Dropout") {
      const ir::Value* mask = n.output(1);
      if (opset < 7 || (mask && (!mask->uses().empty() || mask->is_graph_output()))) return -1;
      if (opset < 12 || !n.input(2) || constant_all(g, n.input(1), 0.0)) return 0;
      if (!is_constant(n.input(2))) return -1;
      QONNX_ASSIGN_OR_RETURN(Tensor training, g.initializer_tensor(n.input(2)));
      return training.dtype() == DType::kBool && training.numel() == 1 && !training.data<bool>()[0] ? 0 : -1;
    }
    return -1;
  }

  // Removes `n`, its readers reading `in`; false when its output is a graph output that cannot take over `in`.
  static Result<bool> bypass(ir::Graph& g, ir::Node* n, ir::Value* in) {
    ir::Value* out = n->output(0);
    if (!out->is_graph_output()) {
      g.replace_all_uses(out, in);
      g.remove_node(n);
      g.remove_value_infos({out->name()});
      return true;
    }
    if (!in->producer() || in->graph() != &g || in->is_graph_output() || in->uses().size() != 1) return false;
    // The producer of `in` writes the graph output: `in` takes the output's name and declared type.
    const std::string name = out->name(), datatype = g.finn_datatype(name);
    g.remove_node(n);
    g.replace_all_uses(out, in);
    QONNX_RETURN_IF_ERROR(g.rename_value(out, g.unique_name(name + "_removed")));
    const std::string stale = out->name();
    g.remove_annotations_if([&](const std::string& tensor) { return tensor == stale; });
    g.remove_value_infos({in->name()});
    QONNX_RETURN_IF_ERROR(g.rename_value(in, name));
    if (!datatype.empty()) g.set_finn_datatype(name, datatype);
    return true;
  }

  pass::Statistic removed_{this, "removed", "identity nodes removed"};
  pass::Statistic kept_for_output_{this, "kept-for-graph-output",
                                   "identity nodes kept: their graph output would alias a graph input, an initializer "
                                   "or a shared value"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_remove_identity_ops() { return std::make_unique<RemoveIdentityOps>(); }

}  // namespace qonnx::passes
