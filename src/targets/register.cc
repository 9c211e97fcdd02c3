#include "qonnx/targets/target.h"

namespace qonnx::targets {

std::unique_ptr<Target> make_qdq_target();
std::unique_ptr<Target> make_ngraph_target();
std::unique_ptr<Target> make_fold_target();
std::unique_ptr<Target> make_ascend_target();
std::unique_ptr<Target> make_qonnx_target();
std::unique_ptr<Target> make_hls4ml_target();
std::unique_ptr<Target> make_finn_target();

void register_all_targets(TargetRegistry& registry) {
  registry.add(make_qdq_target());
  registry.add(make_ngraph_target());
  registry.add(make_fold_target());
  registry.add(make_ascend_target());
  registry.add(make_qonnx_target());
  registry.add(make_finn_target());
  registry.add(make_hls4ml_target());
}

}  // namespace qonnx::targets
