// --target finn: the FINN dialect that FINN's step_qonnx_to_finn (qonnx cleanup, then ConvertQONNXtoFINN)
// makes of a QONNX model, exact where FINN's front end approximates or refuses: activation quantizers
// as MultiThreshold with proven thresholds (every rounding mode and zero point), integer weights with
// their finn_datatype and the scale moved behind the consumer, AveragePool + Trunc as QuantAvgPool2d,
// Gemm as MatMul, conv biases as Add, exact identity removals (docs/finn.md).
//
// Its check compares the result bit for bit with a reference: the same pipeline without the
// MultiThreshold and QuantAvgPool2d conversions. Moving a weight scale behind its consumer re-associates
// float arithmetic unless the scale is a power of two (and so does a Gemm alpha other than 0, +-1, +-2^e
// with a bias), so the comparison with the original is exact only without such steps; otherwise its
// deviation is reported, and checked against --atol/--rtol when given.
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

constexpr const char* kActivationPass = "quant-act-to-multithreshold";
constexpr const char* kAvgPoolPass = "avgpool-trunc-to-quantavgpool";
constexpr const char* kWeightPass = "fold-quant-weights";

// `pipeline` without the passes whose rewrites the check proves exact.
std::vector<pass::PipelineItem> without_exact_rewrites(const std::vector<pass::PipelineItem>& pipeline) {
  std::vector<pass::PipelineItem> out;
  for (const auto& item : pipeline) {
    if (item.pass == kActivationPass || item.pass == kAvgPoolPass) continue;
    out.push_back(item);
    out.back().group = without_exact_rewrites(item.group);
  }
  return out;
}

struct Reference {
  ir::Model model;
  int64_t reassociated = 0;        // steps that may round differently from the original (below)
  int64_t reassociated_terms = 0;  // the longest sum a weight-scale move re-associates
};

// The counters of the steps that re-associate float arithmetic: a weight scale that is not a power of
// two moved behind its consumer; a Gemm whose alpha MatMul + Mul + Add round once more than the kernel.
constexpr std::pair<const char*, const char*> kInexactSteps[] = {{kWeightPass, "scales-moved-not-power-of-two"},
                                                                 {"gemm-to-matmul", "rounded-twice"}};

Result<Reference> exact_reference(const CheckRequest& request) {
  QONNX_ASSIGN_OR_RETURN(const std::vector<pass::PipelineItem> pipeline, fresh_pipeline(request));
  pass::PassContext ctx;
  QONNX_ASSIGN_OR_RETURN(ir::Model model, run_on_original(request, without_exact_rewrites(pipeline), ctx));
  Reference out{std::move(model)};
  auto counter = [&](const char* pass, const char* name) -> int64_t {
    auto it = ctx.counters().find(pass);
    if (it == ctx.counters().end()) return 0;
    auto c = it->second.find(name);
    return c == it->second.end() ? 0 : c->second;
  };
  for (const auto& [pass, name] : kInexactSteps) out.reassociated += counter(pass, name);
  out.reassociated_terms = counter(kWeightPass, "max-reassociated-terms");
  return out;
}

class FinnTarget : public Target {
 public:
  std::string name() const override { return "finn"; }
  std::string summary() const override {
    return "FINN's dialect (step_qonnx_to_finn), exact: MultiThreshold activations, integer weights, QuantAvgPool2d";
  }
  bool standard_onnx_result() const override { return false; }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    // qonnx's cleanup_model, as FINN runs it first.
    b.add("qonnx-domains").add("freeze-initializer-inputs");
    // Below opset 7 Gemm broadcasts C its own way (gemm-to-matmul leaves it): raised to 13, never lowered.
    add_opset_steps(b, options.opset ? options.opset : kOldestTargetOpset);
    b.add("infer-shapes").add("unique-parameters").add("fold-constants", {{"skip-quantizers", "1"}, {"shapes", "1"}});
    b.add("infer-shapes").add("fold-transpose-into-quant").add("cleanup", {{"merge-constants", "0"}});
    // A QCDQ export: its exact QuantizeLinear -> [Clip] -> DequantizeLinear chains become Quant nodes first.
    b.add("qcdq-to-qonnx").add("infer-shapes");
    // ConvertQONNXtoFINN.
    b.add("extract-conv-bias").add("gemm-to-matmul").add("fold-transpose-into-quant").add("infer-shapes");
    b.add("infer-datatypes").add(kWeightPass, {{"mode", "finn"}}).add(kActivationPass).add("infer-shapes");
    b.add("infer-datatypes").add(kAvgPoolPass).add("remove-identity-ops").add("cleanup").add("infer-shapes").add("infer-datatypes");
    // MinimizeAccumulatorWidth, from exact integer ranges: accumulators and thresholds get their smallest types.
    b.add("minimize-accumulator-width");
    return b.build();
  }
  bool owns_pipeline(const std::vector<pass::PipelineItem>& pipeline) const override {
    return uses_pass(pipeline, kActivationPass) || uses_pass(pipeline, kAvgPoolPass);
  }

  Result<CheckOutcome> check(const ir::Model& converted, const CheckRequest& request) const override {
    auto reference = exact_reference(request);
    if (!reference.is_ok()) return std::move(reference).status().with_context("--check: building the exact reference");
    auto exact = analysis::check_equivalence(reference.value().model, converted, {request.runs, request.seed, 0.0, 0.0, request.arithmetic});
    if (!exact.is_ok()) return std::move(exact).status().with_context("--check against the exact reference");
    CheckOutcome out;
    for (const auto& c : exact.value()) {
      out.checks.emplace_back("exact-reference", c);
      if (!c.ok) {
        out.failed = true;
        out.failure = "the MultiThreshold/QuantAvgPool2d form differs from the quantizers it replaced";
      }
    }
    const int64_t moved = reference.value().reassociated;
    // Moved power-of-two scales change no bit: then the original must be matched exactly too.
    const bool judged = request.tolerance_given || moved == 0;
    analysis::CheckOptions deviation_options{request.runs, request.seed, request.atol, request.rtol, request.arithmetic};
    std::string beyond = fmt::format("beyond atol {:g} / rtol {:g}", request.atol, request.rtol);
    if (!request.tolerance_given) {
      // A re-associated sum of n terms differs by about (2n + 1) units in the last place of the sum of
      // its terms' magnitudes: taken relative to the output, what lies beyond is a sum that cancelled or
      // a quantization level that flipped downstream.
      const double terms = static_cast<double>(std::max<int64_t>(reference.value().reassociated_terms, 1));
      deviation_options.atol = moved == 0 ? 0.0 : request.atol;
      deviation_options.rtol = moved == 0 ? 0.0 : (2 * terms + 1) * std::ldexp(1.0, -24);
      beyond = moved == 0 ? "differ"
                          : fmt::format("beyond atol {:g} / rtol {:g} (the re-association bound of {}-term sums; beyond "
                                        "it a sum cancelled or a quantization level flipped downstream)", deviation_options.atol,
                                        deviation_options.rtol, static_cast<int64_t>(terms));
    }
    QONNX_ASSIGN_OR_RETURN(const ir::Model original, request.original());
    auto deviation = analysis::check_equivalence(original, converted, deviation_options);
    if (!deviation.is_ok()) return std::move(deviation).status().with_context("--check");
    const std::string against = moved == 0 ? " against the original"
                                           : fmt::format(" against the original ({} step(s) re-associate float arithmetic: "
                                                         "non-power-of-two weight scales moved, Gemm alphas)", moved);
    append_check_lines(out, deviation.value(), request.runs, against, beyond, judged);
    append_check_lines(out, exact.value(), request.runs, " against the exact reference", "differ");
    for (const auto& c : deviation.value()) {
      out.checks.emplace_back("original", c);
      if (!c.ok && judged && !out.failed) {
        out.failed = true;
        out.failure = moved == 0 ? "the converted model differs from the original"
                                 : fmt::format("the converted model differs beyond atol {:g} / rtol {:g}", request.atol, request.rtol);
      }
    }
    if (!judged) out.lines.push_back("check: the re-association's deviation is reported, not checked (give --atol/--rtol to bound it)");
    return out;
  }
};

}  // namespace

std::unique_ptr<Target> make_finn_target() { return std::make_unique<FinnTarget>(); }

}  // namespace qonnx::targets
