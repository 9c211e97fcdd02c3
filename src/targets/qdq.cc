// --target qdq: QONNX quantizers as standard QuantizeLinear / Clip / DequantizeLinear where exact, exact
// float ops otherwise (docs/targets.md). Standard ops only, so nothing to register.
#include "qonnx/targets/target.h"

namespace qonnx::targets {
namespace {

class QdqTarget : public Target {
 public:
  std::string name() const override { return "qdq"; }
  std::string summary() const override { return "QuantizeLinear/Clip/DequantizeLinear (exact), opset 13..21"; }
  Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options, const pass::PassRegistry& registry) const override {
    QONNX_RETURN_IF_ERROR(check_target_opset(options.opset));
    pass::PipelineBuilder b(registry);
    add_lowering_steps(b, options.opset, {{"target", "qdq"}});
    return b.build();
  }
};

}  // namespace

std::unique_ptr<Target> make_qdq_target() { return std::make_unique<QdqTarget>(); }

}  // namespace qonnx::targets
