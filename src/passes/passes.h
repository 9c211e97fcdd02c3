// Factories of the built-in passes (one file per pass).
#pragma once

#include <memory>

#include "qonnx/pass/pass.h"

namespace qonnx::passes {

std::unique_ptr<pass::Pass> make_fold_constants();
std::unique_ptr<pass::Pass> make_fold_quant_weights();
std::unique_ptr<pass::Pass> make_cleanup();
std::unique_ptr<pass::Pass> make_infer_shapes();
std::unique_ptr<pass::Pass> make_lower_quant();
std::unique_ptr<pass::Pass> make_upgrade_opset();
std::unique_ptr<pass::Pass> make_lower_custom_ops();
std::unique_ptr<pass::Pass> make_ascend_quant_matmul();
std::unique_ptr<pass::Pass> make_freeze_initializer_inputs();
// qonnx-cleanup and inference-cost preprocessing (qonnx's transformations).
std::unique_ptr<pass::Pass> make_canonicalize_domains();
std::unique_ptr<pass::Pass> make_unique_parameters();
std::unique_ptr<pass::Pass> make_fold_transpose_into_quant();
std::unique_ptr<pass::Pass> make_readable_names();
std::unique_ptr<pass::Pass> make_override_input_shape();
std::unique_ptr<pass::Pass> make_extract_conv_bias();
std::unique_ptr<pass::Pass> make_infer_datatypes();
std::unique_ptr<pass::Pass> make_qcdq_to_qonnx();
std::unique_ptr<pass::Pass> make_to_channels_last();
std::unique_ptr<pass::Pass> make_quant_act_to_multithreshold();
std::unique_ptr<pass::Pass> make_gemm_to_matmul();
std::unique_ptr<pass::Pass> make_hls4ml_support();
std::unique_ptr<pass::Pass> make_explicit_attributes();
// FINN's front end (docs/finn.md).
std::unique_ptr<pass::Pass> make_batchnorm_to_affine();
std::unique_ptr<pass::Pass> make_remove_identity_ops();
std::unique_ptr<pass::Pass> make_extract_quant_scale_zeropt();
std::unique_ptr<pass::Pass> make_avgpool_trunc_to_quantavgpool();

// Whether a value is an initializer the passes may treat as constant. An initializer that is also a
// graph input is a default a caller could override: a variable, unless freeze-initializer-inputs
// (first in every target pipeline) made it a plain constant.
bool is_constant(const ir::Value* v);

// The node's inputs when all are constant in that sense, else nullopt.
std::optional<std::vector<Tensor>> constant_inputs(const ir::Graph& graph, const ir::Node& node);

}  // namespace qonnx::passes
