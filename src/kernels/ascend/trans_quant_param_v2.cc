// Ascend TransQuantParamV2: float32 scale [+ offset] -> the uint64 word QuantBatchMatMul reads
// (SEMANTICS.md section 4), and the word's encode/decode helpers of qonnx/kernels/ascend.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "qonnx/dialect/target_ops.h"
#include "kernels/common/attr_check.h"
#include "kernels/ascend/ascend_kernels.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/quant/rounding.h"
#include "qonnx/support/log.h"

namespace qonnx::kernels::ascend {

uint32_t fp19_round_half_even(uint32_t bits) {
  const uint32_t exponent = (bits >> 23) & 0xFFu;
  if (exponent == 0) return bits & 0x80000000u;  // zero or subnormal: signed zero
  if (exponent == 0xFFu) return fp19_truncate(bits);
  // Adding just under half an FP19 ulp, plus one when the kept part is odd, carries exactly when
  // the dropped 13 bits are above half, or at half with an odd kept part (ties to even). The sign
  // bit is never reached: the largest magnitude carries into the infinity pattern.
  return (bits + 0xFFFu + ((bits >> 13) & 1u)) & kFp19Mask;
}

int32_t trans_quant_offset(float offset) {
  const float r = std::clamp(quant::round_half_even(offset), -256.0f, 255.0f);
  return static_cast<int32_t>(r);
}

uint64_t encode_trans_quant_param(float scale, std::optional<float> offset, int round_mode) {
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  const uint32_t low = round_mode == 1 ? fp19_round_half_even(bits) : fp19_truncate(bits);
  uint64_t word = uint64_t{low} | kSignedFlagBit;
  if (offset) {
    const uint64_t field = static_cast<uint64_t>(static_cast<uint32_t>(trans_quant_offset(*offset)) & 0x1FFu);
    word |= field << kOffsetShift;
  }
  return word;
}

TransQuantParam decode_trans_quant_param(uint64_t word) {
  TransQuantParam p;
  const uint32_t low = static_cast<uint32_t>(word) & kFp19Mask;
  std::memcpy(&p.scale, &low, sizeof low);
  const int32_t field = static_cast<int32_t>((word >> kOffsetShift) & 0x1FFu);
  p.offset = field >= 256 ? field - 512 : field;
  p.is_signed = (word & kSignedFlagBit) != 0;
  return p;
}

namespace {

Status check_nonempty_finite(const std::vector<float>& values, const char* what) {
  if (values.empty()) return Status(Code::kInvalidModel, fmt::format("{} is empty", what));
  for (size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k]))
      return Status(Code::kFailed, fmt::format("{} must be finite, got {} at element {}", what, values[k], k));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<uint64_t>> encode_trans_quant_params(const std::vector<float>& scale,
                                                        const std::optional<std::vector<float>>& offset,
                                                        int64_t round_mode) {
  if (round_mode != 0 && round_mode != 1)
    return Status(Code::kInvalidModel,
                  fmt::format("round_mode must be 0 (truncate) or 1 (round half to even), got {}", round_mode));
  QONNX_RETURN_IF_ERROR(check_nonempty_finite(scale, "scale"));
  if (offset) QONNX_RETURN_IF_ERROR(check_nonempty_finite(*offset, "offset"));
  const size_t ns = scale.size(), no = offset ? offset->size() : 1, n = std::max(ns, no);
  if ((ns != 1 && ns != n) || (no != 1 && no != n))
    return Status(Code::kInvalidModel, fmt::format("offset has {} values and scale {}: only length 1 broadcasts", no, ns));
  const auto subnormal = std::find_if(scale.begin(), scale.end(), [](float v) { return std::fpclassify(v) == FP_SUBNORMAL; });
  if (subnormal != scale.end())
    log::warn("TransQuantParamV2: subnormal scale {} at element {} becomes {} in FP19", *subnormal,
              subnormal - scale.begin(), round_mode == 1 ? "zero" : "a truncated subnormal");
  std::vector<uint64_t> words(n);
  for (size_t k = 0; k < n; ++k) {
    std::optional<float> off;
    if (offset) off = (*offset)[no == 1 ? 0 : k];
    words[k] = encode_trans_quant_param(scale[ns == 1 ? 0 : k], off, static_cast<int>(round_mode));
  }
  return words;
}

}  // namespace qonnx::kernels::ascend

namespace qonnx::kernels {
namespace {

// A parameter of TransQuantParamV2: float32 of shape (t,) or (1, n).
Result<std::vector<float>> param_input(const exec::KernelContext& ctx, size_t i, const char* what) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->dtype() != DType::kFloat)
    return ctx.input_error(Code::kInvalidModel, i, "{} must be float32, got {}", what, dtype_name(t->dtype()));
  if (!(t->rank() == 1 || (t->rank() == 2 && t->dim(0) == 1)))
    return ctx.input_error(Code::kInvalidModel, i, "{} must have shape (t,) or (1, n), got {}", what,
                           dims_to_string(t->dims()));
  return std::vector<float>(t->data<float>(), t->data<float>() + t->numel());
}

// round_mode, read once per node (encode_trans_quant_params validates it).
struct RoundModeAttr {
  int64_t round_mode;
};

Result<RoundModeAttr> round_mode_attr(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(const int64_t mode, int_attr(node, "round_mode", 0));
  return RoundModeAttr{mode};
}

Status trans_quant_param_v2(exec::KernelContext& ctx, const RoundModeAttr& attrs) {
  QONNX_ASSIGN_OR_RETURN(std::vector<float> scale, param_input(ctx, 0, "scale"));
  std::optional<std::vector<float>> offset;
  if (ctx.input(1)) {
    QONNX_ASSIGN_OR_RETURN(offset, param_input(ctx, 1, "offset"));
  }
  // A 2-D scale fixes the output shape: an offset may not widen it.
  const Tensor* s = ctx.input(0);
  if (s->rank() == 2 && offset && offset->size() > scale.size())
    return ctx.input_error(Code::kInvalidModel, 1, "offset shape {} is wider than the 2-D scale {}",
                           dims_to_string(ctx.input(1)->dims()), dims_to_string(s->dims()));
  QONNX_ASSIGN_OR_RETURN(std::vector<uint64_t> words,
                         ascend::encode_trans_quant_params(scale, offset, attrs.round_mode));
  Tensor y(DType::kUInt64, s->rank() == 2 ? s->dims() : Dims{static_cast<int64_t>(words.size())});
  std::copy(words.begin(), words.end(), y.data<uint64_t>());
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_trans_quant_param_kernels(exec::KernelRegistry& r) {
  r.add(dialect::kAscendDomain, dialect::kTransQuantParamV2, {dialect::kAscendDomainVersion, exec::kNoUpperVersion},
        exec::typed_kernel<RoundModeAttr, round_mode_attr, trans_quant_param_v2>());
}

}  // namespace qonnx::kernels
