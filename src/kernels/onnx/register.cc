#include <algorithm>
#include <optional>
#include <vector>

#include "kernels/common/attr_check.h"
#include "kernels/onnx/onnx_kernels.h"
#include "qonnx/kernels/register.h"

namespace qonnx::kernels {
namespace {

// Concat of values that all have a per-tensor form with the same scale: that scale, over the union of
// their integer ranges (the output holds their elements unchanged).
std::vector<std::optional<exec::IntegerForm>> concat_form(const exec::PrepackContext& context) {
  std::vector<std::optional<exec::IntegerForm>> out(context.node->outputs().size());
  const size_t inputs = context.node->inputs().size();
  if (out.empty() || inputs == 0) return out;
  exec::IntegerForm joined;
  for (size_t i = 0; i < inputs; ++i) {
    const exec::IntegerForm* in = context.form(i);
    if (!in || !in->per_tensor() || in->scales.size() != 1) return out;
    if (i == 0) {
      joined = *in;
    } else if (in->scales[0] == joined.scales[0]) {  // the same float: == on finite non-zero scales
      joined.lo = std::min(joined.lo, in->lo);
      joined.hi = std::max(joined.hi, in->hi);
    } else {
      return out;
    }
  }
  out[0] = std::move(joined);
  return out;
}

// Resize and Upsample in nearest mode copy input elements (tf_crop_and_resize excepted: its points
// outside the input take extrapolation_value).
std::vector<std::optional<exec::IntegerForm>> nearest_resize_form(const exec::PrepackContext& context) {
  const auto mode = string_attr(*context.node, "mode", "nearest");
  const auto transform = string_attr(*context.node, "coordinate_transformation_mode", "half_pixel");
  if (!mode.is_ok() || mode.value() != "nearest" || !transform.is_ok() || transform.value() == "tf_crop_and_resize")
    return std::vector<std::optional<exec::IntegerForm>>(context.node->outputs().size());
  return exec::same_per_tensor_form(context);
}

}  // namespace

void register_onnx_kernels(exec::KernelRegistry& r) {
  register_identity_kernels(r);
  register_elementwise_kernels(r);
  register_unary_kernels(r);
  register_logic_kernels(r);
  register_activation_kernels(r);
  register_softmax_kernels(r);
  register_cast_kernels(r);
  register_matmul_kernels(r);
  register_gemm_kernels(r);
  register_einsum_kernels(r);
  register_det_kernels(r);
  register_quantize_linear_kernels(r);
  register_conv_kernels(r);
  register_conv_transpose_kernels(r);
  register_pool_kernels(r);
  register_normalization_kernels(r);
  register_shape_kernels(r);
  register_transpose_kernels(r);
  register_generator_kernels(r);
  register_slice_pad_kernels(r);
  register_gather_scatter_kernels(r);
  register_reduce_kernels(r);
  register_resize_kernels(r);
  register_control_flow_kernels(r);
  // Issue 27: recurrent, signal, text, sequence/optional, random.
  register_recurrent_kernels(r);
  register_signal_kernels(r);
  register_text_kernels(r);
  register_sequence_kernels(r);
  register_random_kernels(r);
  // Issue 27 (losses, detection, sampling, unpooling, Unique, training optimizers).
  register_loss_kernels(r);
  register_detection_kernels(r);
  register_grid_sample_kernels(r);
  register_unpool_kernels(r);
  register_unique_kernels(r);
  register_optimizer_kernels(r);
  // Integer forms pass through the ops that move or select elements without changing them, so a
  // quantizer's form reaches the layer behind a MaxPool or a Reshape (docs/arithmetic.md).
  for (const char* op : {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "MaxPool",
                         "GlobalMaxPool", "DepthToSpace", "SpaceToDepth", "Slice", "Gather", "Expand", "Tile"})
    r.set_integer_forms("", op, exec::same_per_tensor_form);
  r.set_integer_forms("", "Concat", concat_form);
  for (const char* op : {"Resize", "Upsample"}) r.set_integer_forms("", op, nearest_resize_form);
  r.set_integer_forms("", "Relu", exec::relu_form);
}

}  // namespace qonnx::kernels
