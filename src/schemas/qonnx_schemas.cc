#include "qonnx/schemas/schemas.h"

#include <mutex>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/ir/model.h"
#include "qonnx/quant/avg_pool.h"

namespace qonnx::schemas {
namespace {

const std::vector<std::string> kNumeric = {"tensor(float)", "tensor(double)", "tensor(float16)", "tensor(int32)",
                                           "tensor(int64)", "tensor(int8)", "tensor(uint8)", "tensor(int16)",
                                           "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(bfloat16)"};

// Y has X's type... float32 for the quantizers, and the broadcast shape of X and its parameters,
// which is X's shape for every real export; other shapes are left to the executor.
void same_as_first_input_float(onnx::InferenceContext& ctx) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// QuantAvgPool2d: float32 out, the pooled shape of a 4-D input in its data_layout (qonnx/quant/avg_pool.h).
void quant_avg_pool_shape(onnx::InferenceContext& ctx) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  if (in.dim_size() != 4) fail_shape_inference("QuantAvgPool2d needs a 4-D input, got rank ", in.dim_size());
  auto int_attr = [&](const char* name) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    return a ? a->i() : int64_t{1};
  };
  const onnx::AttributeProto* layout = ctx.getAttribute("data_layout");
  const bool channels_last = layout && layout->s() == "NHWC";
  const int64_t kernel = int_attr("kernel"), stride = int_attr("stride");
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  for (int d = 0; d < 4; ++d) {
    auto* dim = out->add_dim();
    const bool spatial = channels_last ? (d == 1 || d == 2) : d >= 2;
    if (!spatial) {
      *dim = in.dim(d);
    } else if (in.dim(d).has_dim_value() && kernel >= 1 && stride >= 1) {
      const int64_t o = quant::avg_pool_output_dim(in.dim(d).dim_value(), kernel, stride);
      if (o < 0) fail_shape_inference("QuantAvgPool2d: spatial size ", in.dim(d).dim_value(), " is smaller than the kernel ", kernel);
      dim->set_dim_value(o);
    }
  }
}

void add(onnx::OpSchema schema) { onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema); }

// Exports store each parameter in its own type (a float64 scale beside float32 data, an int64 bit width),
// so every input gets a type parameter of its own: one shared "T" would make strict inference reject them.
onnx::OpSchema quantizer(const char* name, const std::string& domain, int since, const std::vector<const char*>& inputs,
                         const std::vector<std::string>& output_types = {"tensor(float)"}) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(domain).SinceVersion(since);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string type = "T" + std::to_string(i);
    s.Input(static_cast<int>(i), inputs[i], "", type).TypeConstraint(type, kNumeric, "numeric");
  }
  s.Output(0, "Y", "quantized values (float32)", "TY").TypeConstraint("TY", output_types, "float output");
  s.TypeAndShapeInferenceFunction(same_as_first_input_float);
  return s;
}

void register_domain(const std::string& d) {
  // IntQuant is qonnx's other name for Quant. Without a schema, ONNX's version converter stops at the
  // first IntQuant it meets (an unordered_map::at inside the library).
  for (const char* name : {dialect::kQuantOp, dialect::kIntQuantOp}) {
    auto s = quantizer(name, d, 1, {"X", "scale", "zeropt", "bitwidth"});
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("narrow", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("ROUND"));
    add(s);
  }
  add(quantizer(dialect::kBipolarQuantOp, d, 1, {"X", "scale"}));
  {
    auto s = quantizer(dialect::kTruncOp, d, 1, {"X", "scale", "zeropt", "in_bitwidth", "out_bitwidth"});
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("FLOOR"));
    // Exports that leave the domain unimported (so version 1) carry v2's attributes; v1 ignores them.
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("narrow", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    add(s);
  }
  if (ir::is_default_domain(d)) return;  // the default domain carries only the 2021 quantizers, Trunc v1
  {
    auto s = quantizer(dialect::kTruncOp, d, 2, {"X", "scale", "zeropt", "in_bitwidth", "out_scale", "out_bitwidth"});
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("FLOOR"));
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("narrow", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    add(s);
  }
  {
    auto s = quantizer(dialect::kFloatQuantOp, d, 1, {"X", "scale", "exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val"});
    s.Attr("has_inf", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("has_nan", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("has_subnormal", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("saturation", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("rounding_mode", "", onnx::AttributeProto::STRING, std::string("ROUND"));
    add(s);
  }
  {
    // float64 inputs give a float64 output, as in qonnx's numpy code.
    auto s = quantizer(dialect::kMultiThresholdOp, d, 1, {"v", "thresholds"}, {"tensor(float)", "tensor(double)"});
    s.Attr("out_dtype", "", onnx::AttributeProto::STRING, std::string(""));
    s.Attr("out_scale", "", onnx::AttributeProto::FLOAT, 1.0f);
    s.Attr("out_bias", "", onnx::AttributeProto::FLOAT, 0.0f);
    s.Attr("data_layout", "", onnx::AttributeProto::STRING, std::string("NCHW"));
    add(s);
  }
  {
    onnx::OpSchema s;
    s.SetName(dialect::kQuantAvgPool2dOp).SetDomain(d).SinceVersion(1);
    s.Input(0, "x", "integer-valued input, NCHW or NHWC", "T").TypeConstraint("T", {"tensor(float)"}, "float input");
    s.Output(0, "y", "pooled integers (float32)", "T");
    for (const char* name : {"kernel", "stride", "ibits", "obits"})
      s.Attr(name, "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
    s.Attr("signed", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
    s.Attr("data_layout", "", onnx::AttributeProto::STRING, std::string("NCHW"));
    s.TypeAndShapeInferenceFunction(quant_avg_pool_shape);
    add(s);
  }
}

}  // namespace

void register_qonnx_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    for (const std::string& d : dialect::general_domain_spellings()) {
      if (ranges.Map().count(d) == 0) ranges.AddDomainToVersion(d, 1, 2);
      register_domain(d);
    }
    // 2021 Brevitas exports put Quant/BipolarQuant/Trunc in the default domain.
    register_domain("");
  });
}

void register_parked_schemas(const char* domain, const std::vector<std::string>& ops) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  if (ranges.Map().count(domain) == 0) ranges.AddDomainToVersion(domain, 1, 1);
  for (const auto& op : ops) {
    if (onnx::OpSchemaRegistry::Schema(op, 1, domain)) continue;
    onnx::OpSchema s;
    s.SetName(op).SetDomain(domain).SinceVersion(1).AllowUncheckedAttributes();
    s.Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, false);
    s.Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, false);
    s.TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "any tensor");
    s.TypeAndShapeInferenceFunction([](onnx::InferenceContext& ctx) {
      onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
      if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
    });
    add(s);
  }
}

}  // namespace qonnx::schemas
