// batchnorm-to-affine: qonnx's BatchNormToAffine. An inference BatchNormalization with constant float32
// parameters becomes Mul(x, A) -> Add(B), A and B shaped [1, C, 1, ...]:
//   A = (1 / sqrt(var + eps)) * scale,  B = bias - mean * A      (float32, one rounding per operation)
// This is the folded formula qonnx-cc's BatchNormalization kernel computes (onnxruntime's, see
// docs/ort-arithmetic.md), so the result is bit-identical to it; against the ONNX formula
// (x - mean) / sqrt(var + eps) * scale + bias, and qonnx's A = scale / sqrt(var + eps), it re-associates
// float arithmetic (not bit-exact). qonnx's removal of an Unsqueeze before and a Squeeze after the node
// is not done: the Mul and Add take the data's own rank.
#include <cmath>

#include "qonnx/pass/rewriter.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class BatchNormToAffine : public pass::GraphPass {
 public:
  std::string name() const override { return "batchnorm-to-affine"; }
  std::string summary() const override {
    return "Inference BatchNormalization -> Mul + Add per channel (qonnx's BatchNormToAffine; bit-identical to "
           "qonnx-cc's and onnxruntime's kernel, re-associates the ONNX formula)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> norms;
    for (const auto& n : g.nodes())
      if (n->op_type() == "BatchNormalization" && ir::is_default_domain(n->domain()) && n->output(0)) norms.push_back(n.get());
    const int64_t opset = model.opset("").value_or(1);
    bool changed = false;
    for (ir::Node* n : norms) {
      QONNX_ASSIGN_OR_RETURN(bool done, convert(g, n, opset, ctx));
      changed |= done;
    }
    return changed;
  }

 private:
  // Why the node is not an inference BatchNormalization over channels ("" when it is).
  static Result<std::string> not_inference(const ir::Node& n, int64_t opset) {
    if (opset < 7) {
      QONNX_ASSIGN_OR_RETURN(const int64_t is_test, n.attr<int64_t>("is_test", 0));
      if (is_test != 1) return std::string("is_test is not 1");
    }
    if (opset < 9) {
      QONNX_ASSIGN_OR_RETURN(const int64_t spatial, n.attr<int64_t>("spatial", 1));
      if (spatial != 1) return std::string("spatial=0: parameters per position");
    }
    if (opset >= 14) {
      QONNX_ASSIGN_OR_RETURN(const int64_t training, n.attr<int64_t>("training_mode", 0));
      if (training != 0) return std::string("training_mode=1");
    }
    for (size_t k = 1; k < n.outputs().size(); ++k)
      if (const ir::Value* v = n.output(k); v && (!v->uses().empty() || v->is_graph_output()))
        return std::string("a training output is used");
    return std::string();
  }

  Result<bool> convert(ir::Graph& g, ir::Node* n, int64_t opset, pass::PassContext& ctx) {
    QONNX_ASSIGN_OR_RETURN(const std::string why, not_inference(*n, opset));
    if (!why.empty()) {
      ctx.note(n, "left in place: " + why);
      return false;
    }
    ir::Value* x = n->input(0);
    const auto x_type = g.type_of(x);
    const int64_t rank = g.rank_of(x);
    if (!x_type || x_type->dtype != DType::kFloat || rank < 2) {
      ctx.note(n, "left in place: the data's type or rank is unknown, or not float32 of rank >= 2");
      return false;
    }
    std::vector<Tensor> p;
    for (size_t i = 1; i <= 4; ++i) {
      ir::Value* v = n->input(i);
      if (!is_constant(v)) {
        ctx.note(n, "left in place: its parameters are not constant");
        return false;
      }
      QONNX_ASSIGN_OR_RETURN(Tensor t, g.initializer_tensor(v));
      if (t.dtype() != DType::kFloat || t.rank() != 1 || (!p.empty() && t.numel() != p[0].numel())) {
        ctx.note(n, "left in place: its parameters are not float32 vectors of one length");
        return false;
      }
      p.push_back(std::move(t));
    }
    QONNX_ASSIGN_OR_RETURN(const float epsilon, n->attr<float>("epsilon", 1e-5f));
    const int64_t channels = p[0].numel();
    Dims dims(static_cast<size_t>(rank), 1);
    dims[1] = channels;
    Tensor a(DType::kFloat, dims), b(DType::kFloat, dims);
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = p[0].data<float>()[c], bias = p[1].data<float>()[c], mean = p[2].data<float>()[c],
                  var = p[3].data<float>()[c];
      const float inv_std = 1.0f / std::sqrt(var + epsilon);
      a.data<float>()[c] = inv_std * scale;
      b.data<float>()[c] = bias - mean * a.data<float>()[c];
    }
    pass::Rewriter r(g, n);
    QONNX_ASSIGN_OR_RETURN(ir::Value* a_value, r.constant("mul_const", a));
    QONNX_ASSIGN_OR_RETURN(ir::Value* b_value, r.constant("add_const", b));
    QONNX_ASSIGN_OR_RETURN(ir::Value* scaled, r.op("mul", "Mul", {x, a_value}));
    QONNX_RETURN_IF_ERROR(r.finish("add", "Add", {scaled, b_value}));
    ++converted_;
    return true;
  }

  pass::Statistic converted_{this, "converted", "BatchNormalization nodes turned into Mul + Add (re-associated)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_batchnorm_to_affine() { return std::make_unique<BatchNormToAffine>(); }

}  // namespace qonnx::passes
