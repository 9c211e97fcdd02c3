// fold-transpose-into-quant: qonnx's FoldTransposeIntoQuantInit. Transpose(Quant(W, scale, zeropt,
// bits)) with constant quantizer inputs becomes Quant(W^T, scale^T, zeropt^T, bits): the quantizer is
// elementwise, so transposing its inputs first gives the same values. Unlike qonnx, a parameter whose
// rank differs from the permutation's and that is not a single value (it would broadcast differently
// after the transpose) leaves the pair alone, and so does a Quant read by other nodes too.
#include "qonnx/kernels/transpose.h"
#include "passes/passes.h"
#include "qonnx/dialect/qonnx_dialect.h"

namespace qonnx::passes {
namespace {

class FoldTransposeIntoQuant : public pass::GraphPass {
 public:
  std::string name() const override { return "fold-transpose-into-quant"; }
  std::string summary() const override {
    return "Transpose after a Quant/BipolarQuant of constants: transpose the quantizer's initializers instead";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> transposes;
    for (const auto& n : g.nodes())
      if (n->op_type() == "Transpose" && ir::is_default_domain(n->domain())) transposes.push_back(n.get());
    bool changed = false;
    for (ir::Node* t : transposes) {
      QONNX_ASSIGN_OR_RETURN(bool folded, fold(g, t));
      changed |= folded;
    }
    return changed;
  }

 private:
  Result<bool> fold(ir::Graph& g, ir::Node* transpose) {
    ir::Value* q_out = transpose->input(0);
    ir::Node* quant = q_out ? q_out->producer() : nullptr;
    if (!quant || q_out->uses().size() != 1 || q_out->is_graph_output() || transpose->output(0)->is_graph_output())
      return false;
    const dialect::Op op = dialect::classify(*quant);
    if (op != dialect::Op::kQuant && op != dialect::Op::kBipolarQuant) return false;
    auto inputs = constant_inputs(g, *quant);
    if (!inputs || !(*inputs)[0].defined()) return false;
    std::vector<int64_t> perm = transpose->attr_ints("perm");
    if (perm.empty())
      for (size_t d = (*inputs)[0].rank(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    std::vector<Tensor> folded;
    for (const Tensor& t : *inputs) {
      if (!t.defined() || t.dtype() == DType::kString) return false;
      if (t.rank() == perm.size()) folded.push_back(kernels::transposed(t, perm));
      else if (t.numel() == 1) folded.push_back(t);
      else return false;
    }
    for (size_t i = 0; i < folded.size(); ++i) {
      ir::Value* v = quant->input(i);
      if (folded[i].identical((*inputs)[i])) continue;
      // A fresh initializer: the old one may be read elsewhere.
      QONNX_ASSIGN_OR_RETURN(ir::Value* nv, g.add_initializer_tensor(g.unique_name(v->name() + "_transposed"), folded[i]));
      if (std::string dt = g.finn_datatype(v->name()); !dt.empty()) g.set_finn_datatype(nv->name(), dt);
      g.set_node_input(quant, i, nv);
    }
    ir::Value* t_out = transpose->output(0);
    g.remove_node(transpose);
    g.replace_all_uses(t_out, q_out);
    // The Quant's output now has the transposed shape: its old type goes (infer-shapes restores it).
    g.remove_value_infos({q_out->name()});
    ++folded_;
    return true;
  }

  pass::Statistic folded_{this, "folded", "Transposes folded into quantizer initializers"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_transpose_into_quant() { return std::make_unique<FoldTransposeIntoQuant>(); }

}  // namespace qonnx::passes
