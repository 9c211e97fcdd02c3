// Passes: before/after graphs and numeric equivalence; pipeline parsing; determinism.
#include <cmath>

#include <gtest/gtest.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/targets/target.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kQ = "qonnx.custom_op.general";

std::vector<std::string> op_types(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().nodes()) ops.push_back(n->op_type());
  return ops;
}

// x[2,4] -> Quant(act) -> MatMul(Quant(W)) -> y, weights quantized with a per-column scale.
io::ModelBuilder quant_mlp(float zeropt = 0.0f) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {2, 4}).output("y", DType::kFloat, {2, 3});
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.37f * static_cast<float>(i) - 2.0f;
  b.initializer("w", f32({4, 3}, w));
  b.initializer("w_scale", f32({1, 3}, {0.25f, 0.5f, 0.125f}));
  b.initializer("w_zp", f32s(zeropt)).initializer("bits4", f32s(4)).initializer("a_scale", f32s(0.1f)).initializer("zero", f32s(0));
  b.initializer("bits8", f32s(8));
  b.node("Quant", {"x", "a_scale", "zero", "bits8"}, {"xq"}, kQ);
  b.node("Quant", {"w", "w_scale", "w_zp", "bits4"}, {"wq"}, kQ).attr("narrow", 1);
  b.node("MatMul", {"xq", "wq"}, {"y"});
  b.annotate("wq", "SCALEDINT<4>");
  return b;
}

void expect_equivalent(const ir::Model& a, const ir::Model& b) {
  analysis::CheckOptions opts;
  opts.atol = 0;
  opts.rtol = 0;
  auto r = analysis::check_equivalence(a, b, opts);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  for (const auto& c : r.value()) EXPECT_TRUE(c.ok) << c.name << " max abs " << c.max_abs_error << " " << c.problem;
}

TEST(FoldQuantWeights, FloatModeReplacesWeightQuantOnly) {
  auto before = quant_mlp().build().value();
  auto after = quant_mlp().build().value();
  pass::PassContext ctx;
  auto changed = run_passes(after, "fold-quant-weights", ctx);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(changed.value());
  EXPECT_EQ(op_types(after), (std::vector<std::string>{"Quant", "MatMul"}));
  EXPECT_TRUE(after.graph().find_value("wq")->is_initializer());
  EXPECT_EQ(after.graph().finn_datatype("wq"), "SCALEDINT<4>");
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].outcome, "folded");
  expect_equivalent(before, after);
}

TEST(FoldQuantWeights, IntModeStoresIntegersAndScale) {
  for (float zp : {0.0f, 3.0f}) {
    auto before = quant_mlp(zp).build().value();
    auto after = quant_mlp(zp).build().value();
    ASSERT_TRUE(run_passes(after, "fold-quant-weights{mode=int}").is_ok());
    auto ops = op_types(after);
    if (zp == 0) EXPECT_EQ(ops, (std::vector<std::string>{"Quant", "Mul", "MatMul"}));
    else EXPECT_EQ(ops, (std::vector<std::string>{"Quant", "Sub", "Mul", "MatMul"}));
    const ir::Value* ints = after.graph().find_value("wq_int");
    ASSERT_TRUE(ints && ints->is_initializer());
    EXPECT_EQ(after.graph().finn_datatype("wq_int"), "INT4");
    auto t = after.graph().initializer_tensor(ints).value();
    for (int64_t i = 0; i < t.numel(); ++i) {
      float q = t.data<float>()[i];
      EXPECT_EQ(q, std::nearbyint(q));
      EXPECT_GE(q, -7.0f);  // narrow 4-bit
      EXPECT_LE(q, 7.0f);
    }
    expect_equivalent(before, after);
  }
}

TEST(FoldConstants, FoldsChainsInOneSweepButNeverQdq) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {3}).output("y", DType::kFloat, {3}).output("q", DType::kFloat, {3});
  b.initializer("a", f32({3}, {1, 2, 3})).initializer("s", f32s(0.5f));
  b.initializer("zp", make<int8_t>(DType::kInt8, {}, {0}));
  b.node("Constant", {}, {"c"}).attr("value", f32({3}, {10, 20, 30}));
  b.node("Add", {"a", "c"}, {"ac"});
  b.node("Mul", {"ac", "ac"}, {"acc"});
  b.node("Add", {"x", "acc"}, {"y"});
  b.node("QuantizeLinear", {"a", "s", "zp"}, {"aq"});
  b.node("DequantizeLinear", {"aq", "s", "zp"}, {"q"});
  auto before = b.build().value();
  auto after = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(after, "fold-constants", ctx).is_ok());
  EXPECT_EQ(op_types(after), (std::vector<std::string>{"Add", "QuantizeLinear", "DequantizeLinear"}));
  EXPECT_EQ(ctx.counters().at("fold-constants").at("folded-nodes"), 3);
  auto acc = after.graph().initializer_tensor(after.graph().find_value("acc")).value();
  EXPECT_EQ(values_f32(acc), (std::vector<float>{121, 484, 1089}));
  expect_equivalent(before, after);
}

TEST(FoldConstants, RespectsTheSizeCapAndOverridableInitializers) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).input("d", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("d", f32({2}, {1, 2}));  // also a graph input: a default the caller may override
  b.initializer("a", f32({2}, {3, 4}));
  b.node("Add", {"a", "d"}, {"ad"});
  b.node("Add", {"x", "ad"}, {"y"});
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, "fold-constants").is_ok());
  EXPECT_EQ(op_types(m).size(), 2u) << "an overridable input is not constant";

  io::ModelBuilder big(13);
  big.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  big.initializer("a", f32({2}, {3, 4}));
  big.node("Add", {"a", "a"}, {"aa"});
  big.node("Add", {"x", "aa"}, {"y"});
  auto m2 = big.build().value();
  ASSERT_TRUE(run_passes(m2, "fold-constants{max-bytes=4}").is_ok());
  EXPECT_EQ(op_types(m2).size(), 2u) << "8-byte result over a 4-byte cap";
  ASSERT_TRUE(run_passes(m2, "fold-constants{max-bytes=8}").is_ok());
  EXPECT_EQ(op_types(m2).size(), 1u);
}

TEST(Cleanup, RemovesIdentityDeadNodesDuplicatesAndNamesNodes) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("a", f32({2}, {1, 2})).initializer("b", f32({2}, {1, 2})).initializer("unused", f32s(1));
  b.node("Identity", {"x"}, {"xi"}).name("");
  b.node("Add", {"xi", "a"}, {"t"}).name("");
  b.node("Add", {"t", "b"}, {"y"}).name("");
  b.node("Relu", {"t"}, {"dead"}).name("");
  auto before = b.build().value();
  auto m = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, "cleanup", ctx).is_ok());
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Add", "Add"}));
  EXPECT_EQ(m.graph().initializers().size(), 1u) << "duplicate 'b' merged into 'a', 'unused' removed";
  std::vector<std::string> names;
  for (const auto& n : m.graph().nodes()) names.push_back(n->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Add_0", "Add_1"}));
  expect_equivalent(before, m);
  // Idempotent.
  auto again = run_passes(m, "cleanup");
  ASSERT_TRUE(again.is_ok());
  EXPECT_FALSE(again.value());
}

TEST(Pipeline, ParsesOptionsGroupsAndRejectsUnknownNames) {
  auto p = pass::parse_pipeline("fold-constants{max-bytes=16}, fixpoint(cleanup,fold-constants)");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(pass::format_pipeline(p.value()), "fold-constants{max-bytes=16},fixpoint(cleanup,fold-constants)");
  auto typo = pass::parse_pipeline("fold-constant,cleanup");
  ASSERT_FALSE(typo.is_ok());
  EXPECT_EQ(typo.status().code(), Code::kUsage);
  EXPECT_NE(typo.status().to_string().find("did you mean 'fold-constants'"), std::string::npos) << typo.status().to_string();
  auto bad_opt = pass::parse_pipeline("fold-quant-weights{mode=double}");
  ASSERT_FALSE(bad_opt.is_ok());
  EXPECT_EQ(bad_opt.status().code(), Code::kUsage);
  EXPECT_NE(bad_opt.status().to_string().find("option 'mode': 'double' is not one of: float|int"), std::string::npos)
      << bad_opt.status().to_string();
  auto bad_number = pass::parse_pipeline("fold-constants{max-bytes=12x}");
  ASSERT_FALSE(bad_number.is_ok());
  EXPECT_NE(bad_number.status().to_string().find("expected a non-negative integer, got '12x'"), std::string::npos)
      << bad_number.status().to_string();
  auto bad_bool = pass::parse_pipeline("lower-quant{strict=yes}");
  ASSERT_FALSE(bad_bool.is_ok());
  EXPECT_NE(bad_bool.status().to_string().find("expected 0, 1, true or false"), std::string::npos);
  auto unknown_opt = pass::parse_pipeline("cleanup{aggressive=1}");
  ASSERT_FALSE(unknown_opt.is_ok());
  EXPECT_NE(unknown_opt.status().to_string().find("has no option 'aggressive'"), std::string::npos);
  EXPECT_FALSE(pass::parse_pipeline("fixpoint(cleanup").is_ok());
  EXPECT_FALSE(pass::parse_pipeline("").is_ok());
}

TEST(Pipeline, FailingPassNamesPassAndNode) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("w", f32({2}, {1, 2})).initializer("s", f32s(1)).initializer("z", f32s(0)).initializer("bw", f32s(0));
  b.node("Quant", {"w", "s", "z", "bw"}, {"wq"}, kQ).name("BadQuant");
  b.node("Add", {"x", "wq"}, {"y"});
  auto m = b.build().value();
  auto r = run_passes(m, "fold-quant-weights");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("[fold-quant-weights]: node 'BadQuant'"), std::string::npos) << r.status().to_string();
}

TEST(Pipeline, FoldTargetIsDeterministicAndIdempotent) {
  auto target = targets::pipeline_text("fold");
  ASSERT_TRUE(target.is_ok());
  auto m1 = quant_mlp(1.0f).build().value();
  auto m2 = quant_mlp(1.0f).build().value();
  ASSERT_TRUE(run_passes(m1, target.value()).is_ok());
  ASSERT_TRUE(run_passes(m2, target.value()).is_ok());
  auto s1 = io::serialize_model(m1).value();
  EXPECT_EQ(s1, io::serialize_model(m2).value());
  auto again = run_passes(m1, target.value());
  ASSERT_TRUE(again.is_ok());
  EXPECT_FALSE(again.value()) << "running on its own output changes nothing";
  EXPECT_EQ(s1, io::serialize_model(m1).value());
}

}  // namespace
}  // namespace qonnx::test
