// --target hls4ml: the QONNX form hls4ml's ONNX front end reads (docs/hls4ml.md). hls4ml's documentation
// prescribes qonnx's cleanup -> ConvertToChannelsLastAndClean -> GemmToMatMul -> cleanup with the Quant
// nodes kept (hls4ml reads them); a QCDQ export becomes Quant nodes first (hls4ml has no handler for
// QuantizeLinear). Models below opset 13 are raised to it (hls4ml's handlers read Pad's pads, Resize's
// scales and Reshape's shape as inputs, Softmax's axis with the opset-13 default). Every step computes
// what its input did (gemm-to-matmul: see its file for the one case of one more rounding), so --check
// compares with the default tolerance. explicit-attributes writes out the defaults hls4ml does not apply
// (it reads them without one); the last pass reports what hls4ml will still refuse.
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

class Hls4mlTarget : public Target {
 public:
  std::string name() const override { return "hls4ml"; }
  std::string summary() const override {
    return "QONNX for hls4ml: Quant nodes kept (QCDQ converted to them), channels-last, no Gemm; what hls4ml will not "
           "take is reported";
  }
  bool standard_onnx_result() const override { return false; }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    b.add("freeze-initializer-inputs");
    add_opset_steps(b, options.opset ? options.opset : kOldestTargetOpset);
    // qonnx's cleanup, with the QCDQ -> QONNX conversion once constants are folded.
    b.add("qonnx-domains").add("fold-constants", {{"skip-quantizers", "1"}, {"shapes", "1"}}).add("infer-shapes");
    b.add("qcdq-to-qonnx").add("cleanup", {{"merge-constants", "0"}}).add("infer-shapes").add("unique-parameters").add("fold-transpose-into-quant");
    // ConvertToChannelsLastAndClean, GemmToMatMul (its Transpose of a quantized weight folds into the Quant).
    b.add("to-channels-last").add("gemm-to-matmul").add("fold-constants", {{"skip-quantizers", "1"}});
    b.add("fold-transpose-into-quant").add("infer-shapes", {{"initializers", "1"}}).add("cleanup", {{"merge-constants", "0"}});
    b.add("readable-names").add("explicit-attributes").add("hls4ml-support");
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Target> make_hls4ml_target() { return std::make_unique<Hls4mlTarget>(); }

}  // namespace qonnx::targets
