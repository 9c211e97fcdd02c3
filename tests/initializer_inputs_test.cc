// Initializers that are also graph inputs (IR < 4 style): constants for every pass by default, dropped
// from the output's graph inputs; `--keep-initializer-inputs` (freeze-initializer-inputs{keep=1}) keeps
// them overridable, and then a quantizer reading one is left with a warning (an error under --strict).
#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/targets/target.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

const char* kQ = "qonnx.custom_op.general";

// x -> Quant(x, s, z, Ceil(bw_raw)) -> y with s, z, bw_raw initializers listed as graph inputs.
io::ModelBuilder brevitas_style() {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {1, 4}).output("y", DType::kFloat, {1, 4});
  for (const auto& [name, t] : {std::pair<std::string, Tensor>{"s", f32s(0.5f)}, {"z", f32s(0)}, {"bw_raw", f32s(3.2f)}})
    b.input(name, t.dtype(), t.dims()).initializer(name, t);
  b.node("Ceil", {"bw_raw"}, {"bw"});
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ).attr("rounding_mode", "ROUND");
  return b;
}

int quantizers(const ir::Model& m) {
  int n = 0;
  for (const auto& node : m.graph().nodes()) n += dialect::is_quantizer(*node);
  return n;
}

TEST(InitializerInputs, AreConstantsByDefaultAndLeaveTheGraphInputs) {
  for (const char* target : {"qdq", "ngraph", "ascend", "fold"}) {
    SCOPED_TRACE(target);
    auto m = brevitas_style().build().value();
    ASSERT_EQ(m.graph().inputs().size(), 4u);
    pass::PassContext ctx;
    auto r = run_passes(m, targets::pipeline_text(target).value(), ctx);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(m.graph().inputs().size(), 1u);
    EXPECT_EQ(m.graph().inputs()[0]->name(), "x");
    EXPECT_EQ(ctx.counters().at("freeze-initializer-inputs").at("frozen"), 3);
    // fold keeps activation quantizers by design; the standard-ONNX targets lower it.
    EXPECT_EQ(quantizers(m), std::string(target) == "fold" ? 1 : 0);
    EXPECT_TRUE(ctx.diagnostics().empty());
  }
}

TEST(InitializerInputs, KeepOptionLeavesThemOverridableAndTheQuantizerInPlace) {
  auto m = brevitas_style().build().value();
  pass::PassContext ctx;
  auto r = run_passes(m, "freeze-initializer-inputs{keep=1},fold-constants{skip-quantizers=1},lower-quant", ctx);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(m.graph().inputs().size(), 4u);
  EXPECT_EQ(quantizers(m), 1);
  // The Ceil reads an overridable input: not folded either.
  bool ceil_left = false;
  for (const auto& n : m.graph().nodes()) ceil_left |= n->op_type() == "Ceil";
  EXPECT_TRUE(ceil_left);
  ASSERT_EQ(passes::quantizer_outcomes(ctx).size(), 1u);
  EXPECT_EQ(passes::quantizer_outcomes(ctx)[0].outcome, "left");
  EXPECT_NE(passes::quantizer_outcomes(ctx)[0].detail.find("'s' is an overridable graph input"), std::string::npos)
      << passes::quantizer_outcomes(ctx)[0].detail;
  ASSERT_EQ(ctx.diagnostics().size(), 1u);
  EXPECT_NE(ctx.diagnostics()[0].message.find("standard ONNX runtimes cannot run"), std::string::npos);
  auto strict = brevitas_style().build().value();
  auto s = run_passes(strict, "freeze-initializer-inputs{keep=1},lower-quant{strict=1}");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::kUnsupported);
  auto bad = run_passes(strict, "freeze-initializer-inputs{keep=yes}");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kUsage);
}

// A quantizer whose output is another quantizer's scale is a parameter computation: it folds even
// where fold-constants skips quantizers, and so do QuantizeLinear/DequantizeLinear computing one.
TEST(InitializerInputs, QuantizerAndDequantizeParameterSubgraphsFold) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("s_raw", f32s(0.3f)).initializer("s_q", f32s(0.25f)).initializer("z", f32s(0)).initializer("bw8", f32s(8));
  b.initializer("bw_int", make<int8_t>(DType::kInt8, {}, {4})).initializer("one", f32s(1.0f));
  b.node("Quant", {"s_raw", "s_q", "z", "bw8"}, {"s"}, kQ);
  b.node("DequantizeLinear", {"bw_int", "one"}, {"bw"});
  b.node("Quant", {"x", "s", "z", "bw"}, {"y"}, kQ);
  auto m = b.build().value();
  pass::PassContext ctx;
  auto r = run_passes(m, targets::pipeline_text("qdq").value(), ctx);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(quantizers(m), 0);
  EXPECT_TRUE(ctx.diagnostics().empty()) << ctx.diagnostics().front().message;
}

class InitializerInputsCli : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_TRUE(io::save_model(brevitas_style().build().value(), path("in.onnx")).is_ok());
  }
};

TEST_F(InitializerInputsCli, DefaultFreezesKeepWarnsStrictFails) {
  auto r = run_cli("convert " + path("in.onnx") + " -o " + path("qdq.onnx") + " --check 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = io::load_model(path("qdq.onnx")).value();
  EXPECT_EQ(out.graph().inputs().size(), 1u);
  EXPECT_EQ(quantizers(out), 0);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;

  auto keep = run_cli("convert " + path("in.onnx") + " -o " + path("keep.onnx") + " --keep-initializer-inputs");
  ASSERT_EQ(keep.exit_code, 0) << keep.err;
  EXPECT_NE(keep.err.find("the qdq result still holds 1 QONNX op(s) that standard ONNX runtimes cannot run"),
            std::string::npos) << keep.err;
  EXPECT_NE(keep.err.find("overridable graph input"), std::string::npos) << keep.err;
  auto kept = io::load_model(path("keep.onnx")).value();
  EXPECT_EQ(kept.graph().inputs().size(), 4u);
  EXPECT_EQ(quantizers(kept), 1);

  auto strict = run_cli("convert " + path("in.onnx") + " -o " + path("strict.onnx") + " --keep-initializer-inputs --strict");
  EXPECT_EQ(strict.exit_code, 6) << strict.err;
  EXPECT_FALSE(fs::exists(path("strict.onnx")));

  auto dump = run_cli("convert " + path("in.onnx") + " --keep-initializer-inputs --dump-pipeline");
  EXPECT_EQ(dump.exit_code, 0);
  EXPECT_EQ(dump.out.rfind("freeze-initializer-inputs{keep=1},", 0), 0u) << dump.out;
  auto no_pass = run_cli("convert " + path("in.onnx") + " --keep-initializer-inputs --passes cleanup");
  EXPECT_EQ(no_pass.exit_code, 2) << no_pass.err;
  auto help = run_cli("convert --help");
  EXPECT_NE(help.out.find("--keep-initializer-inputs"), std::string::npos);
}

// FloatQuant has no standard form at opset <= 17: the qdq result keeps it with a warning, --strict refuses.
TEST_F(InitializerInputsCli, LeftoverFloatQuantIsNeverSilent) {
  io::ModelBuilder b(13);
  b.import(kQ, 1);
  b.input("x", DType::kFloat, {4}).output("y", DType::kFloat, {4});
  b.initializer("s", f32s(1)).initializer("e", f32s(4)).initializer("m", f32s(3)).initializer("bias", f32s(7));
  b.initializer("max", f32s(448));
  b.node("FloatQuant", {"x", "s", "e", "m", "bias", "max"}, {"y"}, kQ);
  ASSERT_TRUE(io::save_model(b.build().value(), path("fq.onnx")).is_ok());
  auto r = run_cli("convert " + path("fq.onnx") + " -o " + path("fq.qdq.onnx"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("still holds 1 QONNX op(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("FloatQuant"), std::string::npos) << r.err;
  auto strict = run_cli("convert " + path("fq.onnx") + " -o " + path("fq.strict.onnx") + " --strict");
  EXPECT_EQ(strict.exit_code, 6) << strict.err;
  EXPECT_FALSE(fs::exists(path("fq.strict.onnx")));
}

}  // namespace
}  // namespace qonnx::test
