// gemm-to-matmul: qonnx's GemmToMatMul (hls4ml and FINN read MatMul, not Gemm).
// Gemm(A, B, C; alpha, beta, transA, transB) becomes
//   [Transpose A] [Transpose B] -> MatMul -> [Mul alpha] -> [Add (C | Mul(C, beta))]
// where each bracket appears only when needed (alpha != 1; C given and beta != 0; beta != 1).
//
// Exactness against qonnx-cc's Gemm kernel (which follows onnxruntime: y = fma(alpha, AB, beta * C),
// y = alpha * AB without C, C ignored when beta = 0; docs/ort-arithmetic.md). MatMul computes AB with the
// same fixed multiply-add sequence, beta * C is the same float product, so the rewrite computes the same
// bits whenever alpha * AB needs no rounding of its own:
//  - without C (or beta = 0): always (Mul computes the kernel's alpha * AB);
//  - alpha = 1, -1 or 0: always (the product is exact, the fma rounds only the sum);
//  - alpha = +-2^e: while alpha * AB stays within the normal range of the type (no overflow, no
//    subnormal result), where the product is exact too;
//  - any other alpha with C: Mul rounds alpha * AB before Add rounds the sum, one rounding more than the
//    kernel's fma. Counted as `rounded-twice` with a warning; `exact-only=1` leaves those Gemms alone.
// Only float32 and float64 Gemms are rewritten: float16/bfloat16 would round AB to the narrow type before
// adding C (the kernel rounds once), integer Gemms have no Mul by a float alpha. Before opset 7, C
// broadcasts only with Gemm's `broadcast` attribute and Add's own legacy rules: those Gemms are left.
#include <cmath>

#include <fmt/format.h>

#include "qonnx/pass/rewriter.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// The first default-domain opset whose Add broadcasts like numpy (and Gemm's C always broadcasts).
constexpr int64_t kNumpyBroadcastOpset = 7;

DType element_type(const ir::Graph& g, const ir::Value* v) {
  if (!v) return DType::kUndefined;
  if (const ir::Initializer* init = g.initializer(v)) return init->dtype();
  auto t = g.type_of(v);
  return t ? t->dtype : DType::kUndefined;
}

// alpha * x is exact for every x in range: 0, or +-2^e.
bool scaling_is_exact(float alpha) {
  int exponent = 0;
  return alpha == 0.0f || std::fabs(std::frexp(alpha, &exponent)) == 0.5f;
}

Tensor scalar_of(DType dtype, float value) {
  return dtype == DType::kDouble ? Tensor::scalar<double>(dtype, value) : Tensor::scalar<float>(dtype, value);
}

class GemmToMatMul : public pass::GraphPass {
 public:
  std::string name() const override { return "gemm-to-matmul"; }
  std::string summary() const override {
    return "Gemm -> [Transpose] MatMul [Mul alpha] [Add beta*C] (qonnx's GemmToMatMul); bit-identical to the Gemm "
           "kernel except alpha other than 0, +-1, +-2^e with C (one more rounding: warned, `rounded-twice`)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> gemms;
    for (const auto& n : g.nodes())
      if (n->op_type() == "Gemm" && ir::is_default_domain(n->domain())) gemms.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : gemms) {
      auto done = rewrite(model, g, n, ctx);
      if (!done.is_ok()) return std::move(done).status().with_context(n->describe());
      changed |= done.value();
    }
    return changed;
  }

 private:
  Result<bool> rewrite(const ir::Model& model, ir::Graph& g, ir::Node* gemm, pass::PassContext& ctx) {
    auto leave = [&](const std::string& why) {
      ++left_;
      ctx.warn(gemm, "Gemm left: " + why);
      return false;
    };
    if (int64_t opset = model.opset("").value_or(1); opset < kNumpyBroadcastOpset)
      return leave(fmt::format("opset {} is below {} (legacy broadcasting of C)", opset, kNumpyBroadcastOpset));
    if (!gemm->input(0) || !gemm->input(1) || !gemm->output(0)) return leave("A, B or Y is missing");
    // A, B and C share one type: the first one known (B is usually an initializer).
    DType dtype = DType::kUndefined;
    for (size_t i = 0; i < 3 && dtype == DType::kUndefined; ++i) dtype = element_type(g, gemm->input(i));
    if (dtype != DType::kFloat && dtype != DType::kDouble)
      return leave(dtype == DType::kUndefined ? "the element type of A, B and C is unknown (run infer-shapes first)"
                                              : fmt::format("{} is not rewritten exactly (float32 and float64 are)", dtype_name(dtype)));
    for (size_t i = 0; i < 3; ++i) {
      const int64_t rank = g.rank_of(gemm->input(i));
      if (rank > 2 || (i < 2 && rank >= 0 && rank != 2))
        return leave(fmt::format("input #{} has rank {}, which Gemm does not take", i, rank));
    }
    QONNX_ASSIGN_OR_RETURN(const bool trans_a, gemm->attr<bool>("transA", false));
    QONNX_ASSIGN_OR_RETURN(const bool trans_b, gemm->attr<bool>("transB", false));
    QONNX_ASSIGN_OR_RETURN(const float alpha, gemm->attr<float>("alpha", 1.0f));
    QONNX_ASSIGN_OR_RETURN(const float beta, gemm->attr<float>("beta", 1.0f));
    ir::Value* c = beta != 0.0f ? gemm->input(2) : nullptr;  // as the kernel: beta = 0 never reads C
    const bool rounded_twice = c && !scaling_is_exact(alpha);
    if (rounded_twice) {
      if (exact_only_) return leave(fmt::format("alpha {} with C would round twice (exact-only=1)", alpha));
      ++rounded_twice_;
      ctx.warn(gemm, fmt::format("alpha {} with C: Mul rounds alpha * A * B before Add, where Gemm rounds once "
                                 "(results may differ in the last bit)", alpha));
    }

    pass::Rewriter rw(g, gemm);
    auto transposed = [&](ir::Value* v, const std::string& suffix) -> Result<ir::Value*> {
      QONNX_ASSIGN_OR_RETURN(ir::Value* t, rw.op(suffix, "Transpose", {v}, [](ir::Node& n) { n.set_attr("perm", std::vector<int64_t>{1, 0}); }));
      if (std::string dt = g.finn_datatype(v->name()); !dt.empty()) g.set_finn_datatype(t->name(), dt);
      return t;
    };
    ir::Value* a = gemm->input(0);
    ir::Value* b = gemm->input(1);
    if (trans_a) {
      QONNX_ASSIGN_OR_RETURN(a, transposed(a, "transpose_a"));
    }
    if (trans_b) {
      QONNX_ASSIGN_OR_RETURN(b, transposed(b, "transpose_b"));
    }
    const bool scaled = alpha != 1.0f;
    if (!scaled && !c) {
      QONNX_RETURN_IF_ERROR(rw.finish("matmul", "MatMul", {a, b}));
      ++rewritten_;
      return true;
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* y, rw.op("matmul", "MatMul", {a, b}));
    if (scaled) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* factor, rw.constant("alpha", scalar_of(dtype, alpha)));
      if (!c) {
        QONNX_RETURN_IF_ERROR(rw.finish("alpha_mul", "Mul", {y, factor}));
        ++rewritten_;
        return true;
      }
      QONNX_ASSIGN_OR_RETURN(y, rw.op("alpha_mul", "Mul", {y, factor}));
    }
    if (beta != 1.0f) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* factor, rw.constant("beta", scalar_of(dtype, beta)));
      QONNX_ASSIGN_OR_RETURN(c, rw.op("beta_mul", "Mul", {c, factor}));
    }
    QONNX_RETURN_IF_ERROR(rw.finish("bias_add", "Add", {y, c}));
    ++rewritten_;
    return true;
  }

  pass::Option<bool> exact_only_{this, "exact-only", false,
                                 "1: leave a Gemm whose rewrite would round alpha * A * B before adding C"};
  pass::Statistic rewritten_{this, "rewritten", "Gemm nodes rewritten"};
  pass::Statistic rounded_twice_{this, "rounded-twice", "rewrites that round alpha * A * B before adding C"};
  pass::Statistic left_{this, "left", "Gemm nodes left (warned)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_gemm_to_matmul() { return std::make_unique<GemmToMatMul>(); }

}  // namespace qonnx::passes
