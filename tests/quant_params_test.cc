// The quantizer-semantics module (qonnx/quant): parameters read from a node and plain tensors (what a
// pass has) with the same validation and messages the kernels give, codes, and the float8 form.
#include <gtest/gtest.h>

#include <cmath>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/quant/params.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// One Quant-like node of `op` in the general domain, attributes set by `attrs`.
struct OneNode {
  ir::Model model;
  const ir::Node* node = nullptr;
};

OneNode one_node(const std::string& op, size_t inputs, const Attrs& attrs = nullptr) {
  io::ModelBuilder b(13);
  b.import(dialect::kGeneralDomain, 1);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs; ++i) {
    names.push_back("in" + std::to_string(i));
    b.input(names.back(), DType::kFloat, {});
  }
  auto n = b.node(op, names, {"y"}, dialect::kGeneralDomain);
  if (attrs) attrs(n);
  b.output("y", DType::kFloat, {});
  OneNode out{b.build().value()};
  out.node = out.model.graph().nodes().front().get();
  return out;
}

TEST(QuantParams, ReadFromPlainTensors) {
  auto m = one_node(dialect::kQuantOp, 4, [](io::NodeBuilder& n) { n.attr("signed", 0).attr("narrow", 1).attr("rounding_mode", "floor"); });
  const Tensor x = f32({3}, {0.2f, 1.7f, -3.0f}), s = f32s(0.5f), z = f32s(1), bits = f32s(3);
  const std::vector<const Tensor*> tensors = {&x, &s, &z, &bits};
  auto p = quant::read_quant_params(quant::NodeInputs(*m.node, tensors));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->bits, 3);
  EXPECT_FALSE(p->is_signed);
  EXPECT_TRUE(p->narrow);
  EXPECT_EQ(p->mode, quant::RoundingMode::kFloor);
  const quant::IntRange r = quant::quant_int_range(3, false, true);
  EXPECT_EQ(r.min, 0.0f);
  EXPECT_EQ(r.max, 6.0f);
  // floor(clamp(x / s + z, 0, 6)): 1.4 -> 1, 4.4 -> 4, -5 -> 0.
  EXPECT_EQ(quant::quant_code(0.2f, 0.5f, 1.0f, r, p.value()), 1.0f);
  EXPECT_EQ(quant::quant_code(1.7f, 0.5f, 1.0f, r, p.value()), 4.0f);
  EXPECT_EQ(quant::quant_code(-3.0f, 0.5f, 1.0f, r, p.value()), 0.0f);
  // The kernel's vectorised codes agree element by element.
  const quant::NodeInputs in(*m.node, tensors);
  auto codes = kernels::quant_codes(in, x, p.value());
  ASSERT_TRUE(codes.is_ok());
  EXPECT_EQ(values_f32(codes.value()), (std::vector<float>{1, 4, 0}));
}

TEST(QuantParams, ErrorsNameTheInput) {
  auto m = one_node(dialect::kQuantOp, 4);
  const Tensor x = f32({1}, {1}), zero_scale = f32s(0.0f), z = f32s(0), bits = f32s(8), bad_bits = f32s(2.5f);
  auto scale_error = quant::read_quant_params(quant::NodeInputs(*m.node, {&x, &zero_scale, &z, &bits}));
  ASSERT_FALSE(scale_error.is_ok());
  EXPECT_NE(scale_error.status().to_string().find("input #1 'in1'"), std::string::npos) << scale_error.status().to_string();
  EXPECT_NE(scale_error.status().to_string().find("finite and non-zero"), std::string::npos);
  const Tensor s = f32s(1);
  auto bits_error = quant::read_quant_params(quant::NodeInputs(*m.node, {&x, &s, &z, &bad_bits}));
  ASSERT_FALSE(bits_error.is_ok());
  EXPECT_NE(bits_error.status().to_string().find("input #3 'in3'"), std::string::npos) << bits_error.status().to_string();
  auto missing = quant::read_quant_params(quant::NodeInputs(*m.node, {&x, &s, nullptr, &bits}));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Code::kInvalidModel);
  // A rounding mode outside the dialect's names, and an attribute of the wrong type.
  auto odd = one_node(dialect::kQuantOp, 4);
  odd.model.graph().nodes().front()->set_attr("rounding_mode", "STOCHASTIC");
  EXPECT_EQ(quant::read_quant_attrs(*odd.node).status().code(), Code::kUnsupported);
  auto typed = one_node(dialect::kQuantOp, 4);
  typed.model.graph().nodes().front()->set_attr("signed", 1.0f);
  auto attrs = quant::read_quant_attrs(*typed.node);
  ASSERT_FALSE(attrs.is_ok());
  EXPECT_NE(attrs.status().message().find("attribute 'signed' must be INT, got FLOAT"), std::string::npos) << attrs.status().message();
}

TEST(QuantParams, BipolarCodesCompareXWithZero) {
  auto m = one_node(dialect::kBipolarQuantOp, 2);
  const Tensor x = f32({2, 2}, {0.0f, -0.0f, -1e-30f, NAN}), s = f32({2, 1}, {2, 3});
  const std::vector<const Tensor*> tensors = {&x, &s};
  const quant::NodeInputs in(*m.node, tensors);
  auto p = quant::read_bipolar_params(in);
  ASSERT_TRUE(p.is_ok());
  EXPECT_TRUE(p->bipolar());
  auto codes = quant::bipolar_codes(in, x, p->scale);
  ASSERT_TRUE(codes.is_ok());
  // -0.0 >= 0 holds; NaN gives -1, as the kernel.
  EXPECT_EQ(values_f32(codes.value()), (std::vector<float>{1, 1, -1, -1}));
  const Tensor wide = f32({3}, {1, 2, 3});
  EXPECT_FALSE(quant::bipolar_codes(in, x, wide).is_ok());
}

TEST(QuantParams, Float8FormOfFloatQuant) {
  auto m = one_node(dialect::kFloatQuantOp, 6);
  const Tensor x = f32({1}, {1}), s = f32s(1), e4 = f32s(4), m3 = f32s(3), bias7 = f32s(7), max448 = f32s(448), max500 = f32s(500);
  std::string why;
  auto form = quant::float_quant_float8_form(quant::NodeInputs(*m.node, {&x, &s, &e4, &m3, &bias7, &max448}), &why);
  EXPECT_EQ(form.format, DType::kFloat8E4M3FN) << why;
  EXPECT_TRUE(form.saturate);
  // E4M3 with bias 7 reaches 480 by qonnx's formula: a clamp at 500 is 480, not E4M3FN's 448.
  EXPECT_EQ(quant::float_format_max_value(4, 3, 7), 480.0);
  why.clear();
  form = quant::float_quant_float8_form(quant::NodeInputs(*m.node, {&x, &s, &e4, &m3, &bias7, &max500}), &why);
  EXPECT_EQ(form.format, DType::kUndefined);
  EXPECT_NE(why.find("448"), std::string::npos) << why;
}

TEST(QuantParams, TruncStepFollowsNumpy) {
  EXPECT_EQ(quant::trunc_v2_step(1.0f, 0.25f), 4.0f);
  EXPECT_EQ(quant::trunc_v2_step(3.0f, 1.0f), 4.0f);  // log2(3) = 1.58 rounds to 2
  EXPECT_TRUE(std::isnan(quant::trunc_v2_step(-1.0f, 1.0f)));
  EXPECT_EQ(quant::trunc_v2_step(1e38f, 1e-38f), INFINITY);
  EXPECT_EQ(quant::trunc_v2_step(1e-38f, 1e38f), 0.0f);
}

}  // namespace
}  // namespace qonnx::test
