// ONNX OpSchemas of the nGraph target's Quantize / Dequantize (encoding in qonnx/kernels/ngraph.h).
#include <mutex>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "qonnx/dialect/target_ops.h"
#include "qonnx/kernels/ngraph.h"
#include "qonnx/schemas/schemas.h"

namespace qonnx::schemas {
namespace {

int32_t quantized_elem_type(const std::string& type) {
  if (type == "i8") return onnx::TensorProto::INT8;
  if (type == "u8") return onnx::TensorProto::UINT8;
  if (type == "i32") return onnx::TensorProto::INT32;
  fail_type_inference("Quantize: type '", type, "' is not i8, u8 or i32");
}

void quantize_inference(onnx::InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, quantized_elem_type(onnx::getAttribute(ctx, "type", std::string())));
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void dequantize_inference(onnx::InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void add(onnx::OpSchema schema) { onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema); }

}  // namespace

void register_ngraph_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* domain = dialect::kNGraphDomain;
    const int version = dialect::kNGraphDomainVersion;
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (ranges.Map().count(domain) == 0) ranges.AddDomainToVersion(domain, version, version);
    const std::vector<std::string> reals = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"};
    const std::vector<std::string> quants = {"tensor(int8)", "tensor(uint8)", "tensor(int32)"};
    {
      onnx::OpSchema s;
      s.SetName(dialect::kNGraphQuantize).SetDomain(domain).SinceVersion(version);
      s.SetDoc("nGraph Quantize: round_mode(input / scale) + zero_point, saturated to `type`.");
      s.Input(0, "input", "real values", "T").Input(1, "scale", "input's dims at axes", "T");
      s.Input(2, "zero_point", "input's dims at axes", "Q").Output(0, "output", "quantized values", "Q");
      s.TypeConstraint("T", reals, "real types").TypeConstraint("Q", quants, "quantized types");
      s.Attr("type", "output type: i8, u8 or i32", onnx::AttributeProto::STRING, true);
      s.Attr("axes", "axes scale and zero_point vary along", onnx::AttributeProto::INTS, false);
      s.Attr("round_mode", "nGraph RoundMode number, 0..8", onnx::AttributeProto::INT, true);
      s.TypeAndShapeInferenceFunction(quantize_inference);
      add(s);
    }
    {
      onnx::OpSchema s;
      s.SetName(dialect::kNGraphDequantize).SetDomain(domain).SinceVersion(version);
      s.SetDoc("nGraph Dequantize: (input - zero_point) * scale in float32.");
      s.Input(0, "input", "quantized values", "Q").Input(1, "scale", "input's dims at axes", "T");
      s.Input(2, "zero_point", "input's dims at axes", "Q").Output(0, "output", "real values", "T");
      s.TypeConstraint("T", {"tensor(float)"}, "real type").TypeConstraint("Q", quants, "quantized types");
      s.Attr("type", "output type: f32", onnx::AttributeProto::STRING, std::string("f32"));
      s.Attr("axes", "axes scale and zero_point vary along", onnx::AttributeProto::INTS, false);
      s.TypeAndShapeInferenceFunction(dequantize_inference);
      add(s);
    }
  });
}

}  // namespace qonnx::schemas
