// --target ascend: QONNX -> QDQ with byte codes, then DequantizeLinear(int8) x DequantizeLinear(int8)
// MatMul/Gemm [-> QuantizeLinear] -> QuantBatchMatMul with precomputed TransQuantParamV2 scale words
// (SEMANTICS.md section 4, docs/targets.md). Its check compares the result bit for bit with an FP19
// reference and reports the FP19 scales' deviation from the original.
#include <fmt/format.h>

#include "qonnx/kernels/register.h"
#include "qonnx/schemas/schemas.h"
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

constexpr const char* kRewritePass = "ascend-quant-matmul";
// FP19 keeps 10 mantissa bits: a scale rounded either way is within 2^-10 of itself.
constexpr double kFp19RelativeBound = 1.0 / 1024;

// The Ascend result's exact reference: the same pipeline on the original, with ascend-quant-matmul
// emitting QuantBatchMatMul's arithmetic in standard ops with each scale replaced by its FP19 value.
Result<ir::Model> fp19_reference(const CheckRequest& request) {
  QONNX_ASSIGN_OR_RETURN(std::vector<pass::PipelineItem> pipeline, fresh_pipeline(request));
  QONNX_RETURN_IF_ERROR(pass::set_pass_option(pipeline, kRewritePass, "emit", "fp19-reference").status());
  pass::PassContext ctx;
  return run_on_original(request, pipeline, ctx);
}

class AscendTarget : public Target {
 public:
  std::string name() const override { return "ascend"; }
  std::string summary() const override { return "QuantBatchMatMul with TransQuantParamV2 uint64 scale words"; }
  void register_ops(exec::KernelRegistry& kernels) const override {
    kernels::register_ascend_kernels(kernels);
    schemas::register_ascend_schemas();
  }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    // QuantBatchMatMul takes int8 codes, so no int4/int16 containers at opsets >= 21.
    add_lowering_steps(b, options.opset, {{"target", "qdq"}, {"byte-codes", "1"}});
    b.add(kRewritePass).add("fold-constants").add("cleanup").add("infer-shapes");
    return b.build();
  }
  bool owns_pipeline(const std::vector<pass::PipelineItem>& pipeline) const override { return uses_pass(pipeline, kRewritePass); }

  // The rewrite must equal its FP19 reference bit for bit; the FP19 scales' distance from the float
  // original is the hardware format's price: reported, an error only with --atol/--rtol.
  Result<CheckOutcome> check(const ir::Model& converted, const CheckRequest& request) const override {
    auto reference = fp19_reference(request);
    if (!reference.is_ok()) return std::move(reference).status().with_context("--check: building the FP19 reference");
    auto exact = analysis::check_equivalence(reference.value(), converted, {request.runs, request.seed, 0.0, 0.0, request.arithmetic});
    if (!exact.is_ok()) return std::move(exact).status().with_context("--check against the FP19 reference");
    CheckOutcome out;
    for (const auto& c : exact.value()) {
      out.checks.emplace_back("fp19-reference", c);
      if (!c.ok) {
        out.failed = true;
        out.failure = "the Ascend rewrite differs from its FP19 reference (the same scales rounded to FP19 in standard ops)";
      }
    }
    // Unbounded, the count is of elements off by more than the FP19 scale rounding itself can explain
    // (2^-10 relative): a quantization step that flipped upstream.
    analysis::CheckOptions deviation_options{request.runs, request.seed, request.atol, request.rtol, request.arithmetic};
    if (!request.tolerance_given) deviation_options.rtol = kFp19RelativeBound;
    QONNX_ASSIGN_OR_RETURN(const ir::Model original, request.original());
    auto deviation = analysis::check_equivalence(original, converted, deviation_options);
    if (!deviation.is_ok()) return std::move(deviation).status().with_context("--check");
    append_check_lines(out, deviation.value(), request.runs, " against the original (FP19 deviation)",
                       request.tolerance_given
                           ? fmt::format("beyond atol {:g} / rtol {:g}", request.atol, request.rtol)
                           : fmt::format("beyond atol {:g} / rtol 2^-10 (a quantization step flipped upstream)", request.atol),
                       request.tolerance_given);
    append_check_lines(out, exact.value(), request.runs, " against the FP19 reference", "differ");
    for (const auto& c : deviation.value()) {
      out.checks.emplace_back("original", c);
      if (!c.ok && request.tolerance_given && !out.failed) {
        out.failed = true;
        out.failure = fmt::format("the converted model differs beyond atol {:g} / rtol {:g}", request.atol, request.rtol);
      }
    }
    if (!request.tolerance_given) out.lines.push_back("check: the FP19 deviation is reported, not checked (give --atol/--rtol to bound it)");
    return out;
  }
};

}  // namespace

std::unique_ptr<Target> make_ascend_target() { return std::make_unique<AscendTarget>(); }

}  // namespace qonnx::targets
