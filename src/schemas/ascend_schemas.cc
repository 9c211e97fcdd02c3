// ONNX OpSchemas of the Ascend target's TransQuantParamV2 and QuantBatchMatMul (encoding in
// qonnx/kernels/ascend.h).
#include <algorithm>
#include <mutex>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "qonnx/dialect/target_ops.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/schemas/schemas.h"

namespace qonnx::schemas {
namespace {

// (max(t_scale, t_offset),) for a 1-D scale, the scale's shape for a 2-D one.
void trans_quant_param_inference(onnx::InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT64);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const bool has_offset = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  const auto& scale = onnx::getInputShape(ctx, 0);
  if (scale.dim_size() != 1 || !has_offset) {
    onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
    return;
  }
  if (!onnx::hasInputShape(ctx, 1)) return;
  const auto& offset = onnx::getInputShape(ctx, 1);
  if (offset.dim_size() == 0) return;
  const auto& t_scale = scale.dim(0);
  const auto& t_offset = offset.dim(offset.dim_size() - 1);
  if (!t_scale.has_dim_value() || !t_offset.has_dim_value()) return;
  onnx::getOutputShape(ctx, 0)->add_dim()->set_dim_value(std::max(t_scale.dim_value(), t_offset.dim_value()));
}

int32_t output_elem_type(int64_t dtype) {
  switch (dtype) {
    case 0: return onnx::TensorProto::FLOAT;
    case 1: return onnx::TensorProto::FLOAT16;
    case 2: return onnx::TensorProto::INT8;
    case 3: return onnx::TensorProto::INT32;
    case 27: return onnx::TensorProto::BFLOAT16;
    default: fail_type_inference("QuantBatchMatMul: dtype ", dtype, " is not 0, 1, 2, 3 or 27");
  }
}

// Batch dims broadcast, then (m, n) after the optional transposes.
void quant_batch_matmul_inference(onnx::InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, output_elem_type(onnx::getAttribute(ctx, "dtype", int64_t{1})));
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  const auto& a = onnx::getInputShape(ctx, 0);
  const auto& b = onnx::getInputShape(ctx, 1);
  if (a.dim_size() < 2 || b.dim_size() < 2) fail_shape_inference("QuantBatchMatMul: x1 and x2 need rank >= 2");
  const bool ta = onnx::getAttribute(ctx, "transpose_x1", int64_t{0}) != 0;
  const bool tb = onnx::getAttribute(ctx, "transpose_x2", int64_t{0}) != 0;
  onnx::TensorShapeProto a_batch, b_batch, out;
  for (int i = 0; i < a.dim_size() - 2; ++i) *a_batch.add_dim() = a.dim(i);
  for (int i = 0; i < b.dim_size() - 2; ++i) *b_batch.add_dim() = b.dim(i);
  onnx::multidirectionalBroadcastShapeInference({&a_batch, &b_batch}, out);
  *out.add_dim() = a.dim(a.dim_size() - (ta ? 1 : 2));
  *out.add_dim() = b.dim(b.dim_size() - (tb ? 2 : 1));
  *onnx::getOutputShape(ctx, 0) = out;
}

void add(onnx::OpSchema schema) { onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema); }

}  // namespace

void register_ascend_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    namespace ascend = kernels::ascend;
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (ranges.Map().count(dialect::kAscendDomain) == 0)
      ranges.AddDomainToVersion(dialect::kAscendDomain, dialect::kAscendDomainVersion, dialect::kAscendDomainVersion);
    {
      onnx::OpSchema s;
      s.SetName(dialect::kTransQuantParamV2).SetDomain(dialect::kAscendDomain).SinceVersion(dialect::kAscendDomainVersion);
      s.SetDoc("Ascend TransQuantParamV2: float32 scale [and offset] to the uint64 words QuantBatchMatMul reads.");
      s.Input(0, "scale", "(t,) or (1, n)", "T").Output(0, "y", "uint64 words", "W");
      s.Input(1, "offset", "(t,) or (1, n)", "T", onnx::OpSchema::Optional);
      s.TypeConstraint("T", {"tensor(float)"}, "float32").TypeConstraint("W", {"tensor(uint64)"}, "words");
      s.Attr("round_mode", "0 truncate to FP19, 1 round half to even", onnx::AttributeProto::INT, int64_t{0});
      s.TypeAndShapeInferenceFunction(trans_quant_param_inference);
      add(s);
    }
    {
      // The default domain, where Ascend's ONNX parser looks for it (opsets 8..16).
      onnx::OpSchema s;
      s.SetName(dialect::kQuantBatchMatMul).SetDomain(dialect::kQuantBatchMatMulDomain).SinceVersion(1);
      s.SetDoc("Ascend QuantBatchMatMul: int8 x int8 (+ int32 bias) scaled by TransQuantParamV2 words.");
      s.Input(0, "x1", "int8 (..., m, k)", "I").Input(1, "x2", "int8 (..., k, n)", "I");
      s.Input(2, "scale", "TransQuantParamV2 words", "W");
      s.Input(3, "offset", "float offset", "F", onnx::OpSchema::Optional);
      s.Input(4, "bias", "int32 bias", "B", onnx::OpSchema::Optional);
      s.Input(5, "pertoken_scale", "float per-row scale", "F", onnx::OpSchema::Optional);
      s.Output(0, "y", "result", "Y");
      s.TypeConstraint("I", {"tensor(int8)"}, "int8 operands");
      s.TypeConstraint("W", {"tensor(uint64)", "tensor(int64)"}, "scale words");
      s.TypeConstraint("F", {"tensor(float)"}, "float parameters");
      s.TypeConstraint("B", {"tensor(int32)"}, "int32 bias");
      s.TypeConstraint("Y", {"tensor(float)", "tensor(float16)", "tensor(int8)", "tensor(int32)", "tensor(bfloat16)"},
                       "output types");
      s.Attr("dtype", "0 float32, 1 float16, 2 int8, 3 int32, 27 bfloat16", onnx::AttributeProto::INT, int64_t{1});
      s.Attr("transpose_x1", "transpose x1's last two dims", onnx::AttributeProto::INT, int64_t{0});
      s.Attr("transpose_x2", "transpose x2's last two dims", onnx::AttributeProto::INT, int64_t{0});
      s.TypeAndShapeInferenceFunction(quant_batch_matmul_inference);
      add(s);
    }
  });
}

}  // namespace qonnx::schemas
