// OpSchemas of the ops the nGraph and Ascend targets emit: the ONNX checker accepts them and shape
// inference types their outputs.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "qonnx/dialect/target_ops.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/kernels/ascend.h"
#include "qonnx/kernels/ngraph.h"
#include "qonnx/schemas/schemas.h"

namespace qonnx::test {
namespace {

// Checks and infers the model strictly; returns "elem_type dims" of `name` from value_info/outputs.
std::string inferred(const io::ModelBuilder& b, const std::string& name) {
  schemas::register_qonnx_schemas();
  onnx::ModelProto proto = b.proto();
  onnx::checker::check_model(proto);
  onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(true, 1, true));
  for (const auto* list : {&proto.graph().value_info(), &proto.graph().output()}) {
    for (const auto& vi : *list) {
      if (vi.name() != name) continue;
      std::string out = std::to_string(vi.type().tensor_type().elem_type());
      for (const auto& d : vi.type().tensor_type().shape().dim())
        out += " " + (d.has_dim_value() ? std::to_string(d.dim_value()) : std::string("?"));
      return out;
    }
  }
  return "not inferred";
}

TEST(TargetSchemas, NGraphQuantizeDequantize) {
  io::ModelBuilder b(13);
  b.import(dialect::kNGraphDomain, dialect::kNGraphDomainVersion);
  b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat, {2, 3});
  Tensor s(DType::kFloat, {3}), z(DType::kUInt8, {3});
  b.initializer("s", s).initializer("z", z);
  b.node("Quantize", {"x", "s", "z"}, {"q"}, dialect::kNGraphDomain)
      .attr("type", "u8")
      .attr("axes", std::vector<int64_t>{1})
      .attr("round_mode", 4);
  b.node("Dequantize", {"q", "s", "z"}, {"y"}, dialect::kNGraphDomain).attr("axes", std::vector<int64_t>{1});
  EXPECT_EQ(inferred(b, "q"), "2 2 3");  // uint8
  EXPECT_EQ(inferred(b, "y"), "1 2 3");  // float
}

TEST(TargetSchemas, AscendTransQuantParamAndQuantBatchMatMul) {
  io::ModelBuilder b(16);
  b.import(dialect::kAscendDomain, dialect::kAscendDomainVersion);
  b.input("x1", DType::kInt8, {5, 4, 3}).input("x2", DType::kInt8, {2, 3}).output("y", DType::kFloat16, {5, 4, 2});
  Tensor scale(DType::kFloat, {1}), offset(DType::kFloat, {2});
  b.initializer("scale", scale).initializer("offset", offset);
  b.node("TransQuantParamV2", {"scale", "offset"}, {"w"}, dialect::kAscendDomain).attr("round_mode", 1);
  b.node("QuantBatchMatMul", {"x1", "x2", "w"}, {"y"}).attr("transpose_x2", 1);
  EXPECT_EQ(inferred(b, "w"), "13 2");       // uint64 (2,)
  EXPECT_EQ(inferred(b, "y"), "10 5 4 2");   // float16 (5, 4, 2): ATC's default dtype
}

}  // namespace
}  // namespace qonnx::test
