#include "qonnx/schemas/schemas.h"

#include <mutex>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

namespace qonnx::schemas {
namespace {

const char* const kDomains[] = {"qonnx.custom_op.general", "finn.custom_op.general", "onnx.brevitas"};
const std::vector<std::string> kNumeric = {"tensor(float)", "tensor(double)", "tensor(float16)", "tensor(int32)",
                                           "tensor(int64)", "tensor(int8)", "tensor(uint8)"};

// Y has X's type... float32 for the quantizers, and the broadcast shape of X and its parameters,
// which is X's shape for every real export; other shapes are left to the executor.
void same_as_first_input_float(onnx::InferenceContext& ctx) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void add(onnx::OpSchema schema) { onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema); }

onnx::OpSchema base(const char* name, const char* domain, int since) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(domain).SinceVersion(since);
  s.TypeConstraint("T", kNumeric, "data and parameter types");
  s.Output(0, "Y", "quantized values (float32)", "T1").TypeConstraint("T1", {"tensor(float)"}, "float output");
  s.TypeAndShapeInferenceFunction(same_as_first_input_float);
  return s;
}

void register_domain(const char* d) {
  {
    auto s = base("Quant", d, 1);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T").Input(2, "zeropt", "", "T").Input(3, "bitwidth", "", "T");
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("narrow", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("ROUND"));
    add(s);
  }
  {
    auto s = base("BipolarQuant", d, 1);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T");
    add(s);
  }
  {
    auto s = base("Trunc", d, 1);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T").Input(2, "zeropt", "", "T").Input(3, "in_bitwidth", "", "T");
    s.Input(4, "out_bitwidth", "", "T");
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("FLOOR"));
    add(s);
  }
  {
    auto s = base("Trunc", d, 2);
    s.Input(0, "X", "", "T").Input(1, "scale", "", "T").Input(2, "zeropt", "", "T").Input(3, "in_bitwidth", "", "T");
    s.Input(4, "out_scale", "", "T").Input(5, "out_bitwidth", "", "T");
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("FLOOR"));
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("narrow", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    add(s);
  }
  {
    auto s = base("MultiThreshold", d, 1);
    s.Input(0, "v", "", "T").Input(1, "thresholds", "", "T");
    s.Attr("out_dtype", "", onnx::AttributeProto::STRING, std::string(""));
    s.Attr("out_scale", "", onnx::AttributeProto::FLOAT, 1.0f);
    s.Attr("out_bias", "", onnx::AttributeProto::FLOAT, 0.0f);
    s.Attr("data_layout", "", onnx::AttributeProto::STRING, std::string("NCHW"));
    add(s);
  }
}

}  // namespace

void register_qonnx_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    for (const char* d : kDomains) {
      if (ranges.Map().count(d) == 0) ranges.AddDomainToVersion(d, 1, 2);
      register_domain(d);
    }
    // 2021 Brevitas exports put Quant/BipolarQuant/Trunc in the default domain.
    register_domain("");
    register_ngraph_schemas();
    register_ascend_schemas();
  });
}

}  // namespace qonnx::schemas
