// --target ngraph: QONNX quantizers as nGraph-style Quantize / Dequantize in the qonnx_cc.ngraph domain,
// with the nGraph round mode of the quantizer's rounding (SEMANTICS.md section 3, docs/targets.md).
#include "qonnx/kernels/register.h"
#include "qonnx/schemas/schemas.h"
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

class NGraphTarget : public Target {
 public:
  std::string name() const override { return "ngraph"; }
  std::string summary() const override { return "nGraph-style Quantize/Dequantize (qonnx_cc.ngraph domain)"; }
  void register_ops(exec::KernelRegistry& kernels) const override {
    kernels::register_ngraph_kernels(kernels);
    schemas::register_ngraph_schemas();
  }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    add_lowering_steps(b, options.opset, {{"target", "ngraph"}});
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Target> make_ngraph_target() { return std::make_unique<NGraphTarget>(); }

}  // namespace qonnx::targets
