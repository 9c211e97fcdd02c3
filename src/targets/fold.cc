// --target fold: quantized weights precomputed as float initializers; activation quantizers stay QONNX
// ops, and the model keeps its opset unless --target-opset asks for another.
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

class FoldTarget : public Target {
 public:
  std::string name() const override { return "fold"; }
  std::string summary() const override { return "quantized weights folded to float; activation quantizers kept"; }
  bool standard_onnx_result() const override { return false; }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    b.add("freeze-initializer-inputs");
    if (options.opset) add_opset_steps(b, options.opset);
    b.add("fold-quant-weights").add("fold-constants").add("cleanup").add("infer-shapes");
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Target> make_fold_target() { return std::make_unique<FoldTarget>(); }

}  // namespace qonnx::targets
