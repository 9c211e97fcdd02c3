#include "qonnx/passes/register.h"

#include "passes/passes.h"

namespace qonnx::passes {

void register_all_passes(pass::PassRegistry& registry) {
  registry.add(make_fold_constants);
  registry.add(make_fold_quant_weights);
  registry.add(make_cleanup);
  registry.add(make_infer_shapes);
  registry.add(make_lower_quant);
  registry.add(make_upgrade_opset);
  registry.add(make_lower_custom_ops);
  registry.add(make_ascend_quant_matmul);
  registry.add(make_freeze_initializer_inputs);
  for (auto make : {make_canonicalize_domains, make_unique_parameters, make_fold_transpose_into_quant, make_readable_names,
                    make_override_input_shape, make_extract_conv_bias, make_infer_datatypes})
    registry.add(make);
  registry.add(make_qcdq_to_qonnx);
  registry.add(make_to_channels_last);
  registry.add(make_quant_act_to_multithreshold);
  registry.add(make_gemm_to_matmul);
  registry.add(make_hls4ml_support);
  registry.add(make_explicit_attributes);
  for (auto make : {make_batchnorm_to_affine, make_remove_identity_ops, make_extract_quant_scale_zeropt}) registry.add(make);
  registry.add(make_avgpool_trunc_to_quantavgpool);
}

}  // namespace qonnx::passes
