// minimize-accumulator-width: FINN's MinimizeAccumulatorWidth from the exact range analysis (issue 25).
// `--target finn` ends with it, so the integer accumulators of its MatMul/Conv layers and the
// MultiThreshold inputs and thresholds carry the smallest INTk/UINTk that holds every value, where
// infer-datatypes leaves INT32 (or a float type).
#include <onnx/onnx_pb.h>

#include "qonnx/analysis/range.h"
#include "qonnx/analysis/register.h"
#include "qonnx/pass/pass.h"

namespace qonnx::analysis {
namespace {

class MinimizeAccumulatorWidth : public pass::Pass {
 public:
  std::string name() const override { return "minimize-accumulator-width"; }
  std::string summary() const override {
    return "FINN's MinimizeAccumulatorWidth from the exact range analysis: the smallest INTk/UINTk finn_datatype on "
           "integer accumulator outputs (MatMul/Conv/Gemm over integers and integer weights) and on MultiThreshold "
           "inputs and integer thresholds (graph inputs: their annotation, else their type's range)";
  }
  Result<bool> run(ir::Model& model, pass::PassContext&) override {
    QONNX_ASSIGN_OR_RETURN(const RangeAnalysis ranges, analyze_ranges(model, RangeOptions{}));
    const std::string before = annotations(model);
    annotated_ += annotate_ranges(model, ranges);
    return annotations(model) != before;
  }

 private:
  // The main graph's quantization annotations, in file order (what this pass may change).
  static std::string annotations(const ir::Model& model) {
    std::string out;
    for (const auto& a : model.graph().rest().quantization_annotation()) {
      out += a.tensor_name() + ':';
      for (const auto& kv : a.quant_parameter_tensor_names()) out += kv.key() + '=' + kv.value() + ',';
      out += ';';
    }
    return out;
  }

  pass::Statistic annotated_{this, "annotated", "tensors given their smallest integer finn_datatype"};
};

}  // namespace

void register_analysis_passes(pass::PassRegistry& registry) {
  registry.add([]() -> std::unique_ptr<pass::Pass> { return std::make_unique<MinimizeAccumulatorWidth>(); });
}

}  // namespace qonnx::analysis
