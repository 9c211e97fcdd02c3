// Every quantizer class lowers exactly with `--target qdq` (issue 11 items 2-3): per-channel Trunc v1/v2,
// per-channel BipolarQuant, float64/int32/int64/mixed parameter types, initializers listed as graph
// inputs with parameters computed by small constant subgraphs. Each lowered model has no QONNX op left,
// passes the executor's ONNX type constraints and equals the original bit for bit on tie-rich inputs;
// the ORT test runs the same lowered models in onnxruntime (tools/ort/run_ort.js) with zero tolerance.
#include <cmath>
#include <filesystem>
#include <functional>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/targets/target.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const char* kQ = "qonnx.custom_op.general";
const Dims kX = {2, 3, 8};  // channels on axis 1

// 48 values: fine multiples of 1/32 (ties after x/s for every scale used below, and again after
// Trunc's power-of-two step), coarse multiples of 1/4 (saturation), +-inf, -0 and large values.
// No NaN: an integer QuantizeLinear has no NaN code (the documented exception of the QDQ forms).
Tensor tie_rich_input() {
  std::vector<float> v;
  for (int i = 0; i < 24; ++i) v.push_back(static_cast<float>(i - 12) * 0.03125f);
  for (int i = 0; i < 16; ++i) v.push_back(static_cast<float>(i - 8) * 0.25f);
  for (float extra : {-0.0f, 1000.0f, -1000.0f, 0.49999997f, -0.1875f, 2.5f, INFINITY, -INFINITY}) v.push_back(extra);
  return f32(kX, v);
}

Tensor typed(DType dtype, Dims dims, const std::vector<float>& v) { return exec::cast_tensor(f32(std::move(dims), v), dtype).value(); }

struct ClassCase {
  std::string name;
  io::ModelBuilder model;
};

ClassCase quant_case(const std::string& name, const std::string& mode, DType scale_t, DType zp_t, DType bw_t,
                     bool per_channel, bool weight = false, DType x_t = DType::kFloat) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  if (weight) b.initializer("x", exec::cast_tensor(tie_rich_input(), scale_t == DType::kDouble ? DType::kDouble : DType::kFloat).value());
  else b.input("x", x_t, kX);
  b.output("y", DType::kFloat, kX);
  // Integer parameter types need integral scales.
  bool integral = !dtype_is_float(scale_t);
  if (per_channel) b.initializer("s", typed(scale_t, {1, 3, 1}, integral ? std::vector<float>{1, 2, 4} : std::vector<float>{0.5f, 0.25f, 0.0625f}));
  else b.initializer("s", typed(scale_t, {}, {integral ? 2.0f : 0.125f}));
  b.initializer("z", typed(zp_t, {}, {0})).initializer("bw", typed(bw_t, {}, {4}));
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", mode);
  return {name, std::move(b)};
}

ClassCase trunc_case(const std::string& name, int version, const std::string& mode, bool per_channel_scale,
                     bool per_channel_out_scale, bool zero_point, int is_signed, int narrow, DType param_t = DType::kFloat,
                     DType x_t = DType::kFloat) {
  io::ModelBuilder b(13);
  b.import(kQ, version);
  b.input("x", x_t, kX).output("y", DType::kFloat, kX);
  // Integer parameter types need integral scales.
  const bool integral = !dtype_is_float(param_t);
  b.initializer("s", per_channel_scale ? typed(param_t, {1, 3, 1}, integral ? std::vector<float>{1, 2, 4} : std::vector<float>{0.125f, 0.0625f, 0.25f})
                                       : typed(param_t, {}, {integral ? 1.0f : 0.0625f}));
  b.initializer("z", zero_point ? typed(param_t, {3, 1}, {0, 1, -2}) : typed(param_t, {}, {0}));
  b.initializer("ib", typed(param_t, {}, {8})).initializer("ob", typed(param_t, {}, {4}));
  // out_scale / scale: powers of two, and 3 (rounded to the step 4) for the last channel.
  b.initializer("os", per_channel_out_scale ? typed(param_t, {3, 1}, integral ? std::vector<float>{4, 2, 12} : std::vector<float>{0.5f, 0.125f, 0.75f})
                                            : typed(param_t, {}, {integral ? 4.0f : 0.5f}));
  std::vector<std::string> ins = {"x", "s", "z", "ib"};
  if (version == 2) ins.push_back("os");
  ins.push_back("ob");
  auto n = b.node("Trunc", ins, {"y"}, kQ);
  n.attr("rounding_mode", mode);
  if (version == 2) n.attr("signed", is_signed).attr("narrow", narrow);
  return {name, std::move(b)};
}

ClassCase bipolar_case(const std::string& name, bool weight, DType scale_t, DType x_t = DType::kFloat) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  if (weight) b.initializer("x", tie_rich_input());
  else b.input("x", x_t, kX);
  b.output("y", DType::kFloat, kX);
  b.initializer("s", typed(scale_t, {1, 3, 1}, dtype_is_float(scale_t) ? std::vector<float>{0.5f, 2.0f, 0.125f} : std::vector<float>{1, 2, 3}));
  b.node("BipolarQuant", {"x", "s"}, {"y"}, kQ);
  return {name, std::move(b)};
}

// The Brevitas idiom: every initializer also a graph input, parameters computed by small constant
// subgraphs (Ceil of the bit width, a Constant node Cast to the zero point, a Reshape'd and Mul'ed
// per-channel scale, an Identity), an activation quantizer and a weight quantizer feeding a Mul (exact in
// any runtime, unlike a MatMul's sums).
ClassCase initializer_inputs_case(const std::string& name, const std::string& mode) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, kX).output("y", DType::kFloat, kX);
  auto init_input = [&](const std::string& n, const Tensor& t) { b.input(n, t.dtype(), t.dims()).initializer(n, t); };
  init_input("bw_raw", f32s(3.6f));
  init_input("s_flat", f32({3}, {0.25f, 0.125f, 0.03125f}));
  init_input("s_shape", i64({3}, {1, 3, 1}));
  init_input("two", f32s(2.0f));
  init_input("w", f32({8}, {0.3f, -0.7f, 0.11f, 0.5f, -0.25f, 0.9f, 0.05f, -0.6f}));
  init_input("ws", f32s(0.1f));
  b.node("Ceil", {"bw_raw"}, {"bw"});
  b.node("Constant", {}, {"z_i"}).attr("value", make<int64_t>(DType::kInt64, {}, {0}));
  b.node("Cast", {"z_i"}, {"z"}).attr("to", static_cast<int64_t>(DType::kFloat));
  b.node("Reshape", {"s_flat", "s_shape"}, {"s_half"});
  b.node("Mul", {"s_half", "two"}, {"s_mul"});
  b.node("Identity", {"s_mul"}, {"s"});
  b.node("Quant", {"x", "s", "z", "bw"}, {"xq"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", mode);
  b.node("Quant", {"w", "ws", "z", "bw"}, {"wq"}, kQ).attr("signed", 1).attr("narrow", 1).attr("rounding_mode", mode);
  b.node("Mul", {"xq", "wq"}, {"y"});
  return {name, std::move(b)};
}

std::vector<ClassCase> all_cases() {
  std::vector<ClassCase> cases;
  const char* modes[] = {"ROUND", "FLOOR", "CEIL", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};
  for (const char* mode : modes) {
    for (int is_signed : {0, 1})
      for (int narrow : {0, 1})
        cases.push_back(trunc_case(fmt::format("trunc2_per_channel_{}_s{}n{}", mode, is_signed, narrow), 2, mode, true,
                                   true, is_signed == 1, is_signed, narrow));
    cases.push_back(trunc_case(fmt::format("trunc2_scale_per_channel_{}", mode), 2, mode, true, false, true, 1, 0));
    cases.push_back(trunc_case(fmt::format("trunc2_out_scale_per_channel_{}", mode), 2, mode, false, true, false, 1, 0));
    cases.push_back(trunc_case(fmt::format("trunc1_per_channel_{}", mode), 1, mode, true, false, true, 1, 0));
  }
  for (DType t : {DType::kDouble, DType::kInt64}) {
    std::string tn = dtype_name(t);
    cases.push_back(trunc_case("trunc2_params_" + tn, 2, "FLOOR", true, true, true, 1, 0, t));
    cases.push_back(trunc_case("trunc1_params_" + tn, 1, "ROUND", false, false, false, 1, 0, t));
  }
  for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32}) {
    cases.push_back(bipolar_case(fmt::format("bipolar_per_channel_{}", dtype_name(t)), false, t));
    cases.push_back(bipolar_case(fmt::format("bipolar_weight_per_channel_{}", dtype_name(t)), true, t));
  }
  const DType types[] = {DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64};
  for (const char* mode : {"ROUND", "FLOOR", "CEIL", "HALF_UP"})
    for (DType t : types)
      for (bool per_channel : {false, true}) {
        std::string tn = dtype_name(t);
        std::string suffix = fmt::format("{}_{}{}", mode, tn, per_channel ? "_per_channel" : "");
        cases.push_back(quant_case("quant_scale_" + suffix, mode, t, DType::kFloat, DType::kFloat, per_channel));
        cases.push_back(quant_case("quant_all_" + suffix, mode, t, t, t, per_channel));
        cases.push_back(quant_case("quant_weight_" + suffix, mode, t, t, t, per_channel, true));
      }
  // Activations stored as float64: QONNX reads them as float32, so does the lowered graph (a Cast first).
  for (const char* mode : {"ROUND", "FLOOR", "HALF_UP"})
    cases.push_back(quant_case(fmt::format("quant_x_double_{}", mode), mode, DType::kFloat, DType::kFloat, DType::kFloat,
                               true, false, DType::kDouble));
  cases.push_back(bipolar_case("bipolar_x_double", false, DType::kFloat, DType::kDouble));
  cases.push_back(trunc_case("trunc2_x_double", 2, "FLOOR", true, true, true, 1, 0, DType::kFloat, DType::kDouble));
  // Mixed types across the inputs of one node.
  cases.push_back(quant_case("quant_mixed_floor", "FLOOR", DType::kDouble, DType::kInt64, DType::kInt32, true));
  cases.push_back(quant_case("quant_mixed_round", "ROUND", DType::kDouble, DType::kInt32, DType::kInt64, false));
  cases.push_back(quant_case("quant_mixed_half_down", "HALF_DOWN", DType::kInt64, DType::kDouble, DType::kFloat, true));
  for (const char* mode : {"ROUND", "FLOOR", "HALF_UP"})
    cases.push_back(initializer_inputs_case(fmt::format("initializer_inputs_{}", mode), mode));
  return cases;
}

Result<ir::Model> lower_qdq(const io::ModelBuilder& b, pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model m, b.build());
  QONNX_ASSIGN_OR_RETURN(auto pipeline, pass::parse_pipeline(targets::pipeline_text("qdq").value()));
  QONNX_RETURN_IF_ERROR(pass::run_pipeline(m, pipeline, ctx).status());
  return m;
}

TEST(LoweringClasses, EveryClassLowersExactlyWithNoQonnxOpLeft) {
  const Tensor x = tie_rich_input();
  int checked = 0;
  for (const ClassCase& c : all_cases()) {
    SCOPED_TRACE(c.name);
    auto original = c.model.build();
    ASSERT_TRUE(original.is_ok()) << original.status().to_string();
    pass::PassContext ctx;
    auto lowered = lower_qdq(c.model, ctx);
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().to_string();
    for (const auto& n : lowered->graph().nodes())
      EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
    EXPECT_TRUE(ctx.diagnostics().empty()) << ctx.diagnostics().front().message;
    // Every emitted float constant is float32 (QONNX arithmetic is float32).
    for (const auto& init : lowered->graph().initializers()) {
      DType t = lowered->graph().initializer_tensor(init.value)->dtype();
      EXPECT_TRUE(t == DType::kFloat || dtype_is_integer(t)) << init.value->name() << " is " << dtype_name(t);
    }
    // Only the data input is left to feed.
    ASSERT_EQ(lowered->graph().inputs().size(), lowered->graph().runtime_inputs().size());
    std::map<std::string, Tensor> feeds;
    if (!lowered->graph().inputs().empty()) feeds["x"] = exec::cast_tensor(x, lowered->graph().type_of(lowered->graph().inputs()[0])->dtype).value();
    // The executor enforces ONNX's type constraints: running at all means the graph is type-correct.
    EXPECT_EQ(outputs_differ(original.value(), lowered.value(), feeds), "");
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(LoweringClasses, PerChannelTruncIsReportedAsLowered) {
  pass::PassContext ctx;
  auto m = lower_qdq(trunc_case("t", 2, "FLOOR", true, true, true, 1, 0).model, ctx);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].outcome, "lowered");
  EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].detail, "exact float emulation of Trunc v2 (per-channel)");
}

// A FLOOR Quant with a float64 scale used to lower to Div(float, double), which onnxruntime rejects.
TEST(LoweringClasses, Float64ScaleGivesFloat32Division) {
  pass::PassContext ctx;
  auto m = lower_qdq(quant_case("q", "FLOOR", DType::kDouble, DType::kFloat, DType::kFloat, true).model, ctx);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  int divisions = 0;
  for (const auto& n : m->graph().nodes()) {
    if (n->op_type() != "Div") continue;
    ++divisions;
    for (const ir::Value* v : n->inputs()) {
      if (v->is_initializer()) {
        EXPECT_EQ(m->graph().initializer_tensor(v)->dtype(), DType::kFloat);
      }
    }
  }
  EXPECT_EQ(divisions, 1);
}

// onnxruntime runs every lowered class and agrees with `qonnx-cc exec` of the original, exactly.
TEST(LoweringClasses, OnnxruntimeRunsEveryLoweredClassExactly) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path dir = fs::temp_directory_path() / ("qonnx_lowering_ort_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const Tensor x = tie_rich_input();
  int ran = 0;
  const std::vector<ClassCase> cases = all_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    // Every other case (consecutive cases vary one detail, so each class is covered): one node
    // process per model costs about a second.
    const ClassCase& c = cases[i];
    if (i % 2 == 1 && c.name.find("initializer_inputs") == std::string::npos) continue;
    SCOPED_TRACE(c.name);
    auto original = c.model.build();
    pass::PassContext ctx;
    auto lowered = lower_qdq(c.model, ctx);
    ASSERT_TRUE(original.is_ok() && lowered.is_ok());
    std::map<std::string, Tensor> feeds;
    if (!lowered->graph().inputs().empty()) feeds["x"] = exec::cast_tensor(x, lowered->graph().type_of(lowered->graph().inputs()[0])->dtype).value();
    auto want = exec::Executor::create(original.value()).value().run(feeds);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    EXPECT_EQ(onnxruntime_disagrees(lowered.value(), "x", feeds.count("x") ? feeds["x"] : Tensor(), want->outputs[0], 0, 0, dir / c.name), "");
    ++ran;
  }
  EXPECT_GT(ran, 60);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
