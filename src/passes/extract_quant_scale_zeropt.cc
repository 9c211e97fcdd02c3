// extract-quant-scale-zeropt: qonnx's ExtractQuantScaleZeroPt. Quant(x, s, z, b) with constant s and z
// of which one is not trivial (s != 1 or z != 0 somewhere) becomes
//   Div(x, s) -> Add(z) -> Quant(., 1, 0, b) -> Sub(z) -> Mul(s)
// without the Div/Mul pair when s is all ones and the Add/Sub pair when z is all zeros. Bit-exact: Quant
// computes fl(fl(x / s) + z) and returns fl(fl(q - z) * s) in float32, which the chain computes step by
// step, and the inner Quant's x / 1 + 0 changes nothing but -0 to +0, which its rounding and clamping treat
// alike (SEMANTICS.md section 1). Parameters stored in another float or integer type are converted to
// float32 first, as the Quant kernel converts them.
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/pass/rewriter.h"
#include "qonnx/quant/params.h"
#include "passes/param_layout.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

class ExtractQuantScaleZeroPt : public pass::GraphPass {
 public:
  std::string name() const override { return "extract-quant-scale-zeropt"; }
  std::string summary() const override {
    return "Quant(x, s, z, b) -> Div(s), Add(z), Quant(x', 1, 0, b), Sub(z), Mul(s) (qonnx's ExtractQuantScaleZeroPt; "
           "bit-exact)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> quants;
    for (const auto& n : g.nodes())
      if (dialect::classify(*n) == dialect::Op::kQuant && n->output(0)) quants.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : quants) {
      QONNX_ASSIGN_OR_RETURN(bool done, extract(g, n, ctx));
      changed |= done;
    }
    return changed;
  }

 private:
  // The parameter as a float32 initializer: the input itself when it is one, else a converted copy.
  static Result<ir::Value*> float32_parameter(pass::Rewriter& r, const ir::Graph& g, ir::Value* v, const Tensor& t,
                                              const char* suffix) {
    if (g.initializer_tensor(v)->dtype() == DType::kFloat) return v;
    return r.constant(suffix, t);
  }

  Result<bool> extract(ir::Graph& g, ir::Node* quant, pass::PassContext& ctx) {
    ir::Value *x = quant->input(0), *scale = quant->input(1), *zeropt = quant->input(2), *bits = quant->input(3);
    if (!is_constant(scale) || !is_constant(zeropt)) return false;
    QONNX_ASSIGN_OR_RETURN(Tensor s_raw, g.initializer_tensor(scale));
    QONNX_ASSIGN_OR_RETURN(Tensor z_raw, g.initializer_tensor(zeropt));
    const std::vector<const Tensor*> tensors = {nullptr, &s_raw, &z_raw};
    const quant::NodeInputs in(*quant, tensors);
    auto s = quant::scale_input(in, 1, "scale");
    auto z = quant::zero_point_input(in, 2, "zeropt");
    if (!s.is_ok() || !z.is_ok()) {
      ctx.warn(quant, "left in place: " + (s.is_ok() ? z.status() : s.status()).message());
      return false;
    }
    const bool extract_scale = !all_equal_to(s.value(), 1.0f), extract_zeropt = !all_equal_to(z.value(), 0.0f);
    if (!extract_scale && !extract_zeropt) return false;
    pass::Rewriter r(g, quant);
    ir::Value* current = x;
    ir::Value *s_value = nullptr, *z_value = nullptr;
    if (extract_scale) {
      QONNX_ASSIGN_OR_RETURN(s_value, float32_parameter(r, g, scale, s.value(), "scale"));
      QONNX_ASSIGN_OR_RETURN(current, r.op("div", "Div", {current, s_value}));
    }
    if (extract_zeropt) {
      QONNX_ASSIGN_OR_RETURN(z_value, float32_parameter(r, g, zeropt, z.value(), "zeropt"));
      QONNX_ASSIGN_OR_RETURN(current, r.op("add", "Add", {current, z_value}));
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* one, r.constant("unit_scale", Tensor::scalar<float>(DType::kFloat, 1.0f)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* zero, r.constant("zero_zeropt", Tensor::scalar<float>(DType::kFloat, 0.0f)));
    QONNX_ASSIGN_OR_RETURN(current, r.op("quant", quant->op_type(), {current, one, zero, bits},
                                         [quant](ir::Node& n) { n.copy_attributes_from(*quant); }, quant->domain()));
    if (extract_zeropt && extract_scale) {
      QONNX_ASSIGN_OR_RETURN(current, r.op("sub", "Sub", {current, z_value}));
    }
    if (extract_scale) {
      QONNX_RETURN_IF_ERROR(r.finish("mul", "Mul", {current, s_value}));
    } else {
      QONNX_RETURN_IF_ERROR(r.finish("sub", "Sub", {current, z_value}));
    }
    ++extracted_;
    if (extract_scale) ++scales_;
    if (extract_zeropt) ++zero_points_;
    return true;
  }

  pass::Statistic extracted_{this, "extracted", "Quant nodes whose scale or zero point was extracted"};
  pass::Statistic scales_{this, "scales", "scales extracted as Div / Mul"};
  pass::Statistic zero_points_{this, "zero-points", "zero points extracted as Add / Sub"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_extract_quant_scale_zeropt() { return std::make_unique<ExtractQuantScaleZeroPt>(); }

}  // namespace qonnx::passes
