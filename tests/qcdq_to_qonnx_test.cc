// qcdq-to-qonnx and `convert --target qonnx`: every chain class converts exactly or is left with a
// reason, and QONNX -> qdq -> qonnx restores every quantizer of every shared model.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/targets/target.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

constexpr const char* kQonnxPipeline =
    "freeze-initializer-inputs,fold-constants{skip-quantizers=1},infer-shapes,qcdq-to-qonnx,cleanup,infer-shapes";

// x -> QuantizeLinear(s, z) -> [Clip(lo, hi)] -> DequantizeLinear(s, z) -> y, all in `code` storage.
io::ModelBuilder qcdq_model(DType code, double zero_point, std::optional<std::pair<double, double>> clip,
                            bool with_zero_point = true, Dims dims = {2, 8}) {
  // 16-bit codes need QuantizeLinear-21.
  io::ModelBuilder b(code == DType::kInt16 || code == DType::kUInt16 ? 21 : 13);
  b.input("x", DType::kFloat, dims).output("y", DType::kFloat, dims);
  b.initializer("s", f32s(0.25f));
  auto typed = [&](double v) { return exec::cast_tensor(Tensor::scalar<double>(DType::kDouble, v), code).value(); };
  std::vector<std::string> params = {"x", "s"};
  if (with_zero_point) {
    b.initializer("z", typed(zero_point));
    params.push_back("z");
  }
  b.node("QuantizeLinear", params, {"q"});
  std::string codes = "q";
  if (clip) {
    b.initializer("lo", typed(clip->first)).initializer("hi", typed(clip->second));
    b.node("Clip", {"q", "lo", "hi"}, {"c"});
    codes = "c";
  }
  params[0] = codes;
  b.node("DequantizeLinear", params, {"y"});
  return b;
}

const ir::Node* only_quant(const ir::Model& m) {
  const ir::Node* found = nullptr;
  for (const auto& n : m.graph().nodes())
    if (dialect::is_quantizer(*n)) {
      if (found) return nullptr;
      found = n.get();
    }
  return found;
}

float constant_scalar(const ir::Model& m, const ir::Value* v) {
  return exec::cast_tensor(m.graph().initializer_tensor(v).value(), DType::kFloat).value().data<float>()[0];
}

// Converts and checks: exactly one Quant with the given format, and exec equal bit for bit.
void expect_quant(const io::ModelBuilder& b, int bits, bool is_signed, bool narrow) {
  auto original = b.build().value();
  auto m = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, kQonnxPipeline, ctx).is_ok());
  const ir::Node* q = only_quant(m);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->op_type(), "Quant");
  EXPECT_EQ(constant_scalar(m, q->input(3)), static_cast<float>(bits));
  EXPECT_EQ(q->attr<int64_t>("signed", -1).value(), is_signed ? 1 : 0);
  EXPECT_EQ(q->attr<int64_t>("narrow", -1).value(), narrow ? 1 : 0);
  EXPECT_EQ(q->attr_string("rounding_mode", ""), "ROUND");
  for (const auto& n : m.graph().nodes()) EXPECT_NE(n->op_type(), "QuantizeLinear");
  auto checks = analysis::check_equivalence(original, m, {6, 3, 0.0, 0.0});
  ASSERT_TRUE(checks.is_ok()) << checks.status().to_string();
  for (const auto& c : checks.value()) EXPECT_TRUE(c.ok) << c.name << " max abs error " << c.max_abs_error;
}

TEST(QcdqToQonnx, ClipBoundsGiveBitWidthAndNarrow) {
  expect_quant(qcdq_model(DType::kInt8, 0, std::make_pair(-7.0, 7.0)), 4, true, true);
  expect_quant(qcdq_model(DType::kInt8, 0, std::make_pair(-8.0, 7.0)), 4, true, false);
  expect_quant(qcdq_model(DType::kInt8, 0, std::make_pair(-1.0, 1.0)), 2, true, true);
  expect_quant(qcdq_model(DType::kUInt8, 0, std::make_pair(0.0, 7.0)), 3, false, false);
  expect_quant(qcdq_model(DType::kUInt8, 0, std::make_pair(0.0, 254.0)), 8, false, true);  // unsigned narrow
  expect_quant(qcdq_model(DType::kInt8, 0, std::make_pair(0.0, 127.0)), 7, false, false);  // a ReLU-like clip
}

TEST(QcdqToQonnx, StorageTypeWithoutClip) {
  expect_quant(qcdq_model(DType::kInt8, 0, std::nullopt), 8, true, false);
  expect_quant(qcdq_model(DType::kUInt8, 0, std::nullopt), 8, false, false);
  expect_quant(qcdq_model(DType::kInt16, 0, std::nullopt), 16, true, false);
  expect_quant(qcdq_model(DType::kUInt16, 0, std::nullopt), 16, false, false);
}

TEST(QcdqToQonnx, MissingZeroPointIsUint8Zero) {
  expect_quant(qcdq_model(DType::kUInt8, 0, std::nullopt, /*with_zero_point=*/false), 8, false, false);
}

TEST(QcdqToQonnx, ZeroPointMovesIntoTheRange) {
  // uint8 with zero point 128: clamp(rne(x/s) + 128, 0, 255) - 128 is a signed 8-bit quantizer.
  expect_quant(qcdq_model(DType::kUInt8, 128, std::nullopt), 8, true, false);
  // int8 [-8, 6] with zero point -1: [-7, 7], 4-bit narrow.
  expect_quant(qcdq_model(DType::kInt8, -1, std::make_pair(-8.0, 6.0)), 4, true, true);
}

TEST(QcdqToQonnx, RangesWithoutAQuantFormAreLeftAndReported) {
  for (auto clip : {std::make_pair(-5.0, 5.0), std::make_pair(1.0, 7.0), std::make_pair(-1.0, 0.0)}) {
    auto m = qcdq_model(DType::kInt8, 0, clip).build().value();
    pass::PassContext ctx;
    ASSERT_TRUE(run_passes(m, kQonnxPipeline, ctx).is_ok());
    EXPECT_EQ(only_quant(m), nullptr);
    ASSERT_FALSE(ctx.diagnostics().empty());
    EXPECT_NE(ctx.diagnostics()[0].message.find("is not the range of any Quant bit width"), std::string::npos)
        << ctx.diagnostics()[0].message;
    EXPECT_EQ(ctx.counters().at("qcdq-to-qonnx").at("left"), 1);
  }
}

TEST(QcdqToQonnx, DifferentQuantizeAndDequantizeScalesAreLeft) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("s1", f32s(0.25f)).initializer("s2", f32s(0.5f)).initializer("z", Tensor(DType::kInt8, {}));
  b.node("QuantizeLinear", {"x", "s1", "z"}, {"q"});
  b.node("DequantizeLinear", {"q", "s2", "z"}, {"y"});
  auto m = b.build().value();
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m, kQonnxPipeline, ctx).is_ok());
  EXPECT_EQ(only_quant(m), nullptr);
  EXPECT_EQ(ctx.counters().at("qcdq-to-qonnx").at("left"), 1);
}

TEST(QcdqToQonnx, ParametersFromConstantNodesAndPerAxisScales) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 3, 2, 2}).output("y", DType::kFloat, {1, 3, 2, 2});
  b.node("Constant", {}, {"s"}).attr("value", f32({3}, {0.5f, 0.25f, 0.125f}));
  b.node("Constant", {}, {"z"}).attr("value", Tensor(DType::kInt8, {3}));
  b.node("QuantizeLinear", {"x", "s", "z"}, {"q"}).attr("axis", 1);
  b.node("DequantizeLinear", {"q", "s", "z"}, {"y"}).attr("axis", 1);
  auto original = b.build().value();
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, kQonnxPipeline).is_ok());
  const ir::Node* q = only_quant(m);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(m.graph().initializer_tensor(q->input(1)).value().dims(), (Dims{1, 3, 1, 1}));
  auto checks = analysis::check_equivalence(original, m, {6, 1, 0.0, 0.0});
  ASSERT_TRUE(checks.is_ok());
  for (const auto& c : checks.value()) EXPECT_TRUE(c.ok);
}

TEST(QcdqToQonnx, IntegerWeightsWithTheirDatatype) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 3}).output("y", DType::kFloat, {1, 2});
  b.initializer("wq", make<int8_t>(DType::kInt8, {3, 2}, {-7, 3, 0, 7, -1, 5}));
  b.annotate("wq", "INT4");
  b.initializer("ws", f32({2}, {0.5f, 0.25f})).initializer("wz", Tensor(DType::kInt8, {2}));
  b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"w"}).attr("axis", 1);
  b.node("MatMul", {"x", "w"}, {"y"});
  auto original = b.build().value();
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, kQonnxPipeline).is_ok());
  const ir::Node* q = only_quant(m);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(constant_scalar(m, q->input(3)), 4.0f);
  EXPECT_EQ(q->attr<int64_t>("signed", -1).value(), 1);
  EXPECT_EQ(m.graph().initializer_tensor(q->input(1)).value().dims(), (Dims{1, 2}));
  auto checks = analysis::check_equivalence(original, m, {4, 1, 0.0, 0.0});
  ASSERT_TRUE(checks.is_ok());
  for (const auto& c : checks.value()) EXPECT_TRUE(c.ok);
}

// A quantizer as the round trip must restore it: op, format, mode, scale and zero point values.
std::string describe_quantizer(const ir::Model& m, const ir::Node& n) {
  auto values = [&](const ir::Value* v) {
    if (!v) return std::string("-");
    auto t = m.graph().initializer_tensor(v);
    if (!t.is_ok()) return std::string("dynamic");
    Tensor f = exec::cast_tensor(t.value(), DType::kFloat).value();
    std::string out;
    for (int64_t i = 0; i < f.numel(); ++i) out += fmt::format("{},", f.data<float>()[i]);
    return out;
  };
  if (n.op_type() == "BipolarQuant") return "BipolarQuant scale=" + values(n.input(1));
  return fmt::format("{} bits={} signed={} narrow={} mode={} scale={} zeropt={}", n.op_type(), values(n.input(3)),
                     n.attr<int64_t>("signed", 1).value(), n.attr<int64_t>("narrow", 0).value(), n.attr_string("rounding_mode", "ROUND"),
                     values(n.input(1)), values(n.input(2)));
}

std::vector<std::string> quantizers(const ir::Model& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().nodes())
    if (dialect::is_integer_quantizer(*n) && n->op_type() != "Trunc") out.push_back(describe_quantizer(m, *n));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(QcdqToQonnx, SharedModelsRoundTripThroughQdq) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  int restored = 0;
  for (const auto& path : models) {
    SCOPED_TRACE(path.string());
    auto original = io::load_model(path).value();
    // The original after freeze-initializer-inputs and folding, so computed parameters are constants.
    auto reference = io::load_model(path).value();
    ASSERT_TRUE(run_passes(reference, "freeze-initializer-inputs,fold-constants{skip-quantizers=1}").is_ok());
    auto m = io::load_model(path).value();
    ASSERT_TRUE(run_passes(m, targets::pipeline_text("qdq").value()).is_ok());
    ASSERT_TRUE(run_passes(m, targets::pipeline_text("qonnx").value()).is_ok());
    EXPECT_EQ(quantizers(reference), quantizers(m));
    restored += static_cast<int>(quantizers(m).size());
    auto checks = analysis::check_equivalence(original, m, {1, 5, 0.0, 0.0});
    ASSERT_TRUE(checks.is_ok()) << checks.status().to_string();
    for (const auto& c : checks.value()) EXPECT_TRUE(c.ok) << c.name << " max abs error " << c.max_abs_error;
  }
  std::printf("restored %d quantizers over %zu shared models\n", restored, models.size());
}

class QcdqToQonnxCli : public TempDirTest {};

TEST_F(QcdqToQonnxCli, ConvertTargetQonnxWritesQuantAndReports) {
  auto b = qcdq_model(DType::kInt8, 0, std::make_pair(-7.0, 7.0));
  ASSERT_TRUE(io::write_file_atomic(path("in.onnx"), b.serialize()).is_ok());
  auto r = run_cli(fmt::format("convert {} --target qonnx --check 4 --atol 0 --rtol 0 --stats --report {} -o {}", path("in.onnx"),
                               path("r.json"), path("out.onnx")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": ok over 4 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("stats: qcdq-to-qonnx: activations = 1"), std::string::npos) << r.err;
  auto out = io::load_model(path("out.onnx")).value();
  const ir::Node* q = only_quant(out);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->domain(), dialect::kGeneralDomain);
  EXPECT_TRUE(out.opset(dialect::kGeneralDomain).has_value());

  // A chain that cannot convert is named in the warnings and the report.
  auto left = qcdq_model(DType::kInt8, 0, std::make_pair(-5.0, 5.0));
  ASSERT_TRUE(io::write_file_atomic(path("left.onnx"), left.serialize()).is_ok());
  r = run_cli(fmt::format("convert {} --target qonnx --report {} -o {}", path("left.onnx"), path("r2.json"), path("out2.onnx")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[-5, 5] is not the range of any Quant bit width"), std::string::npos) << r.err;
  EXPECT_NE(io::read_file(path("r2.json")).value().find("is not the range of any Quant bit width"), std::string::npos);
}

TEST_F(QcdqToQonnxCli, HelpExplainsTheQonnxTarget) {
  auto r = run_cli("convert --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--target qonnx"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace qonnx::test
