// --target qonnx: the way back, QCDQ -> QONNX (qonnx-convert): exact QuantizeLinear -> [Clip] ->
// DequantizeLinear chains become Quant nodes. The model keeps its opset unless --target-opset asks.
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

class QonnxTarget : public Target {
 public:
  std::string name() const override { return "qonnx"; }
  std::string summary() const override { return "QCDQ -> QONNX Quant nodes (exact chains only)"; }
  bool standard_onnx_result() const override { return false; }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    b.add("freeze-initializer-inputs");
    if (options.opset) add_opset_steps(b, options.opset);
    b.add("fold-constants", {{"skip-quantizers", "1"}}).add("infer-shapes").add("qcdq-to-qonnx").add("cleanup").add("infer-shapes");
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Target> make_qonnx_target() { return std::make_unique<QonnxTarget>(); }

}  // namespace qonnx::targets
