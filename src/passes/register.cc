#include "passes/passes.h"

namespace qonnx::pass {

void register_all_passes(PassRegistry& registry) {
  registry.add(passes::make_fold_constants);
  registry.add(passes::make_fold_quant_weights);
  registry.add(passes::make_cleanup);
  registry.add(passes::make_infer_shapes);
  registry.add(passes::make_lower_quant);
  registry.add(passes::make_upgrade_opset);
  registry.add(passes::make_lower_custom_ops);
  registry.add(passes::make_ascend_quant_matmul);
}

}  // namespace qonnx::pass
