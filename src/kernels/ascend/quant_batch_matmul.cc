// Ascend QuantBatchMatMul with a TransQuantParamV2 scale (SEMANTICS.md section 4):
//   acc = x1 @ x2 + bias in int32 (batch dims broadcast like MatMul), M1 = the word's FP19 scale,
//   float32/float16/bfloat16 output: y = T(float(acc) * M1)
//   int8 output: t = clamp(rne(acc * M1), -256, 255); y = clamp(t + offset, -128, 127)
//   int32 output: y = acc (no dequantization)
// The offset of int8 outputs comes from the word's bits 37..45. A separate `offset` input and
// `pertoken_scale` belong to the float32-scale forms of the Ascend operator and are not supported.
#include <algorithm>
#include <cmath>
#include <vector>

#include "qonnx/dialect/target_ops.h"
#include "kernels/common/attr_check.h"
#include "kernels/ascend/ascend_kernels.h"
#include "kernels/common/gemm_core.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/quant/rounding.h"

namespace qonnx::kernels {
namespace {

enum class OutType { kFloat = 0, kFloat16 = 1, kInt8 = 2, kInt32 = 3, kBFloat16 = 27 };

Result<OutType> out_type(const ir::Node& node) {
  QONNX_ASSIGN_OR_RETURN(const int64_t dtype, int_attr(node, "dtype", 1));
  switch (dtype) {
    case 0: return OutType::kFloat;
    case 1: return OutType::kFloat16;
    case 2: return OutType::kInt8;
    case 3: return OutType::kInt32;
    case 27: return OutType::kBFloat16;
    default:
      return Status(Code::kInvalidModel,
                    fmt::format("dtype {} is not an output type (0 float32, 1 float16, 2 int8, 3 int32, 27 bfloat16)", dtype));
  }
}

// QuantBatchMatMul's attributes, parsed once per node at plan time.
struct QbmmAttrs {
  OutType type;
  bool transpose_x1, transpose_x2;
};

Result<QbmmAttrs> qbmm_attrs(const ir::Node& node, int64_t) {
  QONNX_ASSIGN_OR_RETURN(OutType type, out_type(node));
  QONNX_ASSIGN_OR_RETURN(const bool transpose_x1, flag_attr(node, "transpose_x1", false));
  QONNX_ASSIGN_OR_RETURN(const bool transpose_x2, flag_attr(node, "transpose_x2", false));
  return QbmmAttrs{type, transpose_x1, transpose_x2};
}

DType storage_of(OutType t) {
  switch (t) {
    case OutType::kFloat: return DType::kFloat;
    case OutType::kFloat16: return DType::kFloat16;
    case OutType::kInt8: return DType::kInt8;
    case OutType::kInt32: return DType::kInt32;
    case OutType::kBFloat16: return DType::kBFloat16;
  }
  return DType::kUndefined;
}

// An int8 operand as a stack of int32 (rows x cols) matrices, transposed when asked, plus its batch dims.
struct Operand {
  Dims batch;
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> data;
};

Result<Operand> read_operand(const exec::KernelContext& ctx, size_t i, const char* what, bool transpose) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* t, ctx.required(i, what));
  if (t->dtype() != DType::kInt8)
    return ctx.input_error(Code::kUnsupported, i, "{} must be int8, got {}", what, dtype_name(t->dtype()));
  if (t->rank() < 2)
    return ctx.input_error(Code::kInvalidModel, i, "{} must have rank >= 2, got shape {}", what,
                           dims_to_string(t->dims()));
  Operand op;
  op.batch.assign(t->dims().begin(), t->dims().end() - 2);
  const int64_t r = t->dim(t->rank() - 2), c = t->dim(t->rank() - 1);
  op.rows = transpose ? c : r;
  op.cols = transpose ? r : c;
  op.data.resize(static_cast<size_t>(t->numel()));
  const int8_t* src = t->data<int8_t>();
  const int64_t mats = r * c == 0 ? 0 : t->numel() / (r * c);
  for (int64_t b = 0; b < mats; ++b) {
    const int8_t* s = src + b * r * c;
    int32_t* d = op.data.data() + b * r * c;
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < c; ++x) (transpose ? d[x * r + y] : d[y * c + x]) = s[y * c + x];
  }
  return op;
}

// The per-tensor (1 word) or per-channel (n words) scale words.
Result<std::vector<ascend::TransQuantParam>> read_scale(const exec::KernelContext& ctx, int64_t n) {
  QONNX_ASSIGN_OR_RETURN(const Tensor* s, ctx.required(2, "scale"));
  if (s->dtype() != DType::kUInt64 && s->dtype() != DType::kInt64)
    return ctx.input_error(Code::kUnsupported, 2,
                           "scale must be the uint64 (or int64) words of TransQuantParamV2, got {}",
                           dtype_name(s->dtype()));
  const bool shape_ok = (s->rank() == 1 || (s->rank() == 2 && s->dim(0) == 1)) && (s->numel() == 1 || s->numel() == n);
  if (!shape_ok)
    return ctx.input_error(Code::kInvalidModel, 2, "scale shape {} must be (1,), ({},) or (1, {})",
                           dims_to_string(s->dims()), n, n);
  std::vector<ascend::TransQuantParam> words;
  const uint64_t* w = s->data<uint64_t>();  // int64 words have the same bits
  for (int64_t k = 0; k < s->numel(); ++k) {
    words.push_back(ascend::decode_trans_quant_param(w[k]));
    if (!std::isfinite(words.back().scale))
      return ctx.input_error(Code::kFailed, 2, "word {:#x} at element {} holds a non-finite scale", w[k], k);
  }
  return words;
}

Status quant_batch_matmul(exec::KernelContext& ctx, const QbmmAttrs& attrs) {
  const OutType type = attrs.type;
  if (ctx.input(3))
    return ctx.input_error(Code::kUnsupported, 3,
                           "a separate offset is not supported with a uint64 scale: TransQuantParamV2 packs it "
                           "into the scale words");
  if (ctx.input(5))
    return ctx.input_error(Code::kUnsupported, 5, "pertoken_scale needs a float scale, which is not supported");
  QONNX_ASSIGN_OR_RETURN(Operand a, read_operand(ctx, 0, "x1", attrs.transpose_x1));
  QONNX_ASSIGN_OR_RETURN(Operand b, read_operand(ctx, 1, "x2", attrs.transpose_x2));
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  if (b.rows != k)
    return ctx.input_error(Code::kInvalidModel, 1, "inner dimension {} does not match x1's {}", b.rows, k);
  Dims batch;
  if (!exec::broadcast_dims(a.batch, b.batch, &batch))
    return ctx.input_error(Code::kInvalidModel, 1, "batch dims {} do not broadcast with {}", dims_to_string(b.batch),
                           dims_to_string(a.batch));
  Dims out_dims = batch;
  out_dims.push_back(m);
  out_dims.push_back(n);
  const int64_t total = checked_numel(out_dims);
  if (total < 0) return ctx.error(Code::kInvalidModel, "output {} is too large", dims_to_string(out_dims));
  QONNX_ASSIGN_OR_RETURN(std::vector<ascend::TransQuantParam> words, read_scale(ctx, n));

  // acc = x1 @ x2 in 64 bits per batch entry, then + bias.
  std::vector<int64_t> acc(static_cast<size_t>(total), 0);
  exec::for_each_broadcast<2>(batch, {&a.batch, &b.batch}, [&](int64_t o, const auto& off) {
    gemm_accumulate<int32_t, int64_t>(m, n, k, a.data.data() + off[0] * m * k, k, b.data.data() + off[1] * k * n, n,
                                      acc.data() + o * m * n, n);
  });
  if (const Tensor* bias = ctx.input(4)) {
    Dims joined;
    if (bias->dtype() != DType::kInt32)
      return ctx.input_error(Code::kUnsupported, 4, "bias must be int32, got {}", dtype_name(bias->dtype()));
    if (!exec::broadcast_dims(out_dims, bias->dims(), &joined) || joined != out_dims)
      return ctx.input_error(Code::kInvalidModel, 4, "bias shape {} does not broadcast to the output {}",
                             dims_to_string(bias->dims()), dims_to_string(out_dims));
    const int32_t* bv = bias->data<int32_t>();
    exec::for_each_broadcast<1>(out_dims, {&bias->dims()}, [&](int64_t o, const auto& off) { acc[o] += bv[off[0]]; });
  }

  Tensor y(storage_of(type), out_dims);
  for (int64_t e = 0; e < total; ++e) {
    // The device accumulates in int32: keep the low 32 bits.
    const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc[e])));
    const ascend::TransQuantParam& w = words[words.size() == 1 ? 0 : static_cast<size_t>(e % n)];
    const float scaled = static_cast<float>(v) * w.scale;
    switch (type) {
      case OutType::kFloat: y.data<float>()[e] = scaled; break;
      case OutType::kFloat16: y.data<uint16_t>()[e] = float_to_half(scaled); break;
      case OutType::kBFloat16: y.data<uint16_t>()[e] = float_to_bfloat16(scaled); break;
      case OutType::kInt32: y.data<int32_t>()[e] = v; break;
      case OutType::kInt8: {
        const float t = std::clamp(quant::round_half_even(scaled), -256.0f, 255.0f);
        y.data<int8_t>()[e] = static_cast<int8_t>(std::clamp(static_cast<int32_t>(t) + w.offset, -128, 127));
        break;
      }
    }
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_quant_batch_matmul_kernels(exec::KernelRegistry& r) {
  r.add(dialect::kQuantBatchMatMulDomain, dialect::kQuantBatchMatMul, {1, exec::kNoUpperVersion},
        exec::typed_kernel<QbmmAttrs, qbmm_attrs, quant_batch_matmul>());
}

}  // namespace qonnx::kernels
