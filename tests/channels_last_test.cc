// to-channels-last and `qonnx-cc channels-last`: generated graphs for every idiom (branches, residual
// Add, Concat, Resize, per-channel arithmetic, quantizers, Flatten + MatMul head, Keras-style
// Transposes) and every shared model compute bit for bit what their input did, with the Transposes
// only where a channels-first reader or a graph boundary needs them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "qonnx/analysis/equivalence.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_io.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

constexpr const char* kPipeline = "freeze-initializer-inputs,infer-shapes,to-channels-last,cleanup";

// Deterministic weights with both signs.
Tensor ramp(Dims dims, float step) {
  Tensor t(DType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>((i * 7) % 11 - 5) * step;
  return t;
}

int count_ops(const ir::Model& m, const std::string& op, const std::string& domain = "") {
  int n = 0;
  for (const auto& node : m.graph().nodes()) n += node->op_type() == op && ir::canonical_domain(node->domain()) == domain;
  return n;
}

void expect_exact(const ir::Model& original, const ir::Model& converted, int runs = 3) {
  auto checks = analysis::check_equivalence(original, converted, {runs, 11, 0.0, 0.0});
  ASSERT_TRUE(checks.is_ok()) << checks.status().to_string();
  for (const auto& c : checks.value()) EXPECT_TRUE(c.ok) << c.name << " max abs error " << c.max_abs_error;
}

struct Converted {
  ir::Model model;
  int transposes, channels_last_ops;
};

Converted convert(const io::ModelBuilder& b, const std::string& pipeline = kPipeline) {
  auto original = b.build().value();
  auto m = b.build().value();
  auto ran = run_passes(m, pipeline);
  EXPECT_TRUE(ran.is_ok()) << ran.status().to_string();
  expect_exact(original, m);
  int cl = 0;
  for (const auto& n : m.graph().nodes()) cl += ir::canonical_domain(n->domain()) == dialect::kChannelsLastDomain;
  int t = count_ops(m, "Transpose");
  return Converted{std::move(m), t, cl};
}

// x(1,3,6,6) -> Quant -> Conv(Quant per-channel weights) -> Relu, the common start of every idiom.
io::ModelBuilder stem(int64_t channels = 4) {
  io::ModelBuilder b(13);
  b.import(dialect::kGeneralDomain, 1);
  b.input("x", DType::kFloat, {1, 3, 6, 6});
  b.initializer("s_act", f32s(0.125f)).initializer("zero", f32s(0.0f)).initializer("bits", f32s(4.0f));
  b.node("Quant", {"x", "s_act", "zero", "bits"}, {"xq"}, dialect::kGeneralDomain).attr("signed", 1).attr("narrow", 0);
  b.initializer("w0", ramp({channels, 3, 3, 3}, 0.25f));
  Tensor ws(DType::kFloat, {channels, 1, 1, 1});
  for (int64_t c = 0; c < channels; ++c) ws.data<float>()[c] = 0.25f / static_cast<float>(c + 1);
  b.initializer("w0_s", ws);
  b.node("Quant", {"w0", "w0_s", "zero", "bits"}, {"w0q"}, dialect::kGeneralDomain).attr("signed", 1).attr("narrow", 1);
  b.node("Conv", {"xq", "w0q"}, {"c0"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c0"}, {"a"});
  return b;
}

TEST(ToChannelsLast, ChainNeedsTransposesOnlyAtTheBoundaries) {
  auto b = stem();
  b.initializer("w1", ramp({2, 4, 1, 1}, 0.5f));
  b.node("Quant", {"a", "s_act", "zero", "bits"}, {"aq"}, dialect::kGeneralDomain);
  b.node("Conv", {"aq", "w1"}, {"y"});
  b.output("y", DType::kFloat, {1, 2, 6, 6});
  auto r = convert(b);
  EXPECT_EQ(r.channels_last_ops, 2);
  EXPECT_EQ(r.transposes, 2);  // the input and the output
  // The weight quantizer stays a Quant on transposed weights (no Transpose on the weight path).
  EXPECT_EQ(count_ops(r.model, "Quant", dialect::kGeneralDomain), 3);
}

TEST(ToChannelsLast, BranchesWithResidualAddAndPerChannelArithmetic) {
  auto b = stem();
  b.initializer("w1", ramp({4, 4, 3, 3}, 0.125f)).initializer("w2", ramp({4, 4, 1, 1}, 0.5f));
  b.initializer("m", f32({1, 4, 1, 1}, {0.5f, 2.0f, -1.0f, 0.25f})).initializer("bias", f32({4, 1, 1}, {1, -1, 0.5f, 0}));
  b.node("Conv", {"a", "w1"}, {"b1"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Conv", {"a", "w2"}, {"b2"});
  b.node("Mul", {"b1", "m"}, {"b1m"});
  b.node("Add", {"b1m", "bias"}, {"b1b"});
  b.node("Add", {"b1b", "b2"}, {"sum"});
  b.node("Add", {"sum", "a"}, {"res"});  // residual join with the fork's source
  b.node("MaxPool", {"res"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{2, 2}).attr("strides", std::vector<int64_t>{2, 2});
  b.output("y", DType::kFloat, {1, 4, 3, 3});
  auto r = convert(b);
  EXPECT_EQ(r.channels_last_ops, 4);
  EXPECT_EQ(r.transposes, 2);
}

TEST(ToChannelsLast, ConcatAndNearestResize) {
  auto b = stem();
  b.initializer("w1", ramp({2, 4, 1, 1}, 0.5f)).initializer("w2", ramp({3, 4, 1, 1}, 0.25f));
  b.initializer("w3", ramp({2, 5, 3, 3}, 0.125f));
  b.node("Conv", {"a", "w1"}, {"p"});
  b.node("Conv", {"a", "w2"}, {"q"});
  b.node("Concat", {"p", "q"}, {"cat"}).attr("axis", 1);
  b.initializer("roi", Tensor(DType::kFloat, {0})).initializer("scales", f32({4}, {1, 1, 2, 2}));
  b.node("Resize", {"cat", "roi", "scales"}, {"up"}).attr("mode", "nearest");
  b.node("Conv", {"up", "w3"}, {"y"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y", DType::kFloat, {1, 2, 12, 12});
  auto r = convert(b);
  EXPECT_EQ(r.channels_last_ops, 4);
  EXPECT_EQ(r.transposes, 2);
}

TEST(ToChannelsLast, BatchNormalizationAndFlattenMatMulHead) {
  auto b = stem();
  b.initializer("g", f32({4}, {1, 2, 0.5f, -1})).initializer("beta", f32({4}, {0, 1, -1, 0.5f}));
  b.initializer("mean", f32({4}, {0.1f, 0.2f, 0.3f, 0.4f})).initializer("var", f32({4}, {1, 2, 3, 4}));
  b.node("BatchNormalization", {"a", "g", "beta", "mean", "var"}, {"bn"});
  b.node("Flatten", {"bn"}, {"flat"}).attr("axis", 1);
  b.initializer("wd", ramp({144, 10}, 0.0625f));
  b.node("MatMul", {"flat", "wd"}, {"y"});
  b.output("y", DType::kFloat, {1, 10});
  auto r = convert(b);
  EXPECT_EQ(r.channels_last_ops, 2);
  // Flatten reads channels-first data: summing MatMul rows in another order would change float bits.
  EXPECT_EQ(r.transposes, 2);
}

TEST(ToChannelsLast, KerasStyleTransposesVanish) {
  // NHWC in and out, with the converter's Transposes around every channels-first Conv.
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1, 6, 6, 3}).output("y", DType::kFloat, {1, 6, 6, 2});
  b.initializer("w0", ramp({4, 3, 3, 3}, 0.25f)).initializer("w1", ramp({2, 4, 1, 1}, 0.5f));
  b.node("Transpose", {"x"}, {"x_cf"}).attr("perm", std::vector<int64_t>{0, 3, 1, 2});
  b.node("Conv", {"x_cf", "w0"}, {"c0"}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Transpose", {"c0"}, {"c0_cl"}).attr("perm", std::vector<int64_t>{0, 2, 3, 1});
  b.node("LeakyRelu", {"c0_cl"}, {"a"});
  b.node("Transpose", {"a"}, {"a_cf"}).attr("perm", std::vector<int64_t>{0, 3, 1, 2});
  b.node("Conv", {"a_cf", "w1"}, {"c1"});
  b.node("Transpose", {"c1"}, {"y"}).attr("perm", std::vector<int64_t>{0, 2, 3, 1});
  auto r = convert(b);
  EXPECT_EQ(r.channels_last_ops, 2);
  EXPECT_EQ(r.transposes, 0);
}

TEST(ToChannelsLast, MakeInputChannelsLastTakesNhwcData) {
  auto b = stem();
  b.node("Quant", {"a", "s_act", "zero", "bits"}, {"y"}, dialect::kGeneralDomain);
  b.output("y", DType::kFloat, {1, 4, 6, 6});
  auto original = b.build().value();
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, "infer-shapes,to-channels-last{make-input-channels-last=1},cleanup").is_ok());
  EXPECT_EQ(count_ops(m, "Transpose"), 1);  // the output only
  auto type = m.graph().type_of(m.graph().inputs()[0]);
  ASSERT_TRUE(type && type->has_shape);
  EXPECT_EQ(type->dims, (Dims{1, 6, 6, 3}));
  // Same outputs for the same data fed NHWC.
  Tensor x = ramp({1, 3, 6, 6}, 0.1f), x_nhwc(DType::kFloat, {1, 6, 6, 3});
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t p = 0; p < 36; ++p) x_nhwc.data<float>()[p * 3 + c] = x.data<float>()[c * 36 + p];
  auto e0 = exec::Executor::create(original).value();
  auto e1 = exec::Executor::create(m).value();
  auto y0 = e0.run({{"x", x}}).value().outputs[0];
  auto y1 = e1.run({{"x", x_nhwc}}).value().outputs[0];
  EXPECT_TRUE(y0.identical(y1));
}

TEST(ToChannelsLast, SecondRunChangesNothing) {
  auto b = stem();
  b.output("a", DType::kFloat, {1, 4, 6, 6});
  auto m = b.build().value();
  ASSERT_TRUE(run_passes(m, kPipeline).is_ok());
  auto again = run_passes(m, "to-channels-last");
  ASSERT_TRUE(again.is_ok());
  EXPECT_FALSE(again.value());
}

TEST(ToChannelsLast, SharedModelsStayExact) {
  auto models = shared_models();
  if (models.empty()) GTEST_SKIP() << "../shared/qonnx_models is absent";
  for (const auto& path : models) {
    SCOPED_TRACE(path.string());
    auto original = io::load_model(path).value();
    auto m = io::load_model(path).value();
    ASSERT_TRUE(run_passes(m, kPipeline).is_ok());
    // One run each: some shared models declare 789444-row batches (the ctest time limit is 600 s).
    expect_exact(original, m, 1);
    // The channels-last shared models, lowered to channels-first, come back without a Transpose.
    if (path.filename().string().find("_ch_last") == std::string::npos) continue;
    auto cf = io::load_model(path).value();
    ASSERT_TRUE(run_passes(cf, "freeze-initializer-inputs,lower-custom-ops,cleanup,infer-shapes").is_ok());
    ASSERT_GT(count_ops(cf, "Transpose"), 0);
    ASSERT_TRUE(run_passes(cf, kPipeline).is_ok());
    EXPECT_EQ(count_ops(cf, "Transpose"), 0);
    expect_exact(original, cf, 1);
  }
}

class ChannelsLastCli : public TempDirTest {};

TEST_F(ChannelsLastCli, WritesExactResultAndExplainsItself) {
  auto b = stem();
  b.output("a", DType::kFloat, {1, 4, 6, 6});
  ASSERT_TRUE(io::write_file_atomic(path("in.onnx"), b.serialize()).is_ok());
  auto r = run_cli(fmt::format("channels-last {} --check 3 --stats", path("in.onnx")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": bit-identical over 3 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("stats: to-channels-last: wrapped = 1"), std::string::npos) << r.err;
  auto out = io::load_model(path("in.channels_last.onnx"));
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(count_ops(out.value(), "Conv", dialect::kChannelsLastDomain), 1);

  auto help = run_cli("channels-last --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Example"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--make-input-channels-last"), std::string::npos);
  // --check compares layouts the caller feeds the same way: not with NHWC inputs.
  EXPECT_EQ(run_cli(fmt::format("channels-last {} --check 1 --make-input-channels-last", path("in.onnx"))).exit_code, 2);
  EXPECT_EQ(run_cli(fmt::format("channels-last {} -o {}", path("missing.onnx"), path("o.onnx"))).exit_code, 3);
  EXPECT_FALSE(std::filesystem::exists(path("o.onnx")));
}

// A hard link names the input under another path: refused like the input's own path (fs::equivalent).
TEST_F(ChannelsLastCli, RefusesToOverwriteTheInputThroughAHardLink) {
  auto b = stem();
  b.output("a", DType::kFloat, {1, 4, 6, 6});
  const std::string bytes = b.serialize();
  ASSERT_TRUE(io::write_file_atomic(path("in.onnx"), bytes).is_ok());
  std::filesystem::create_hard_link(path("in.onnx"), path("link.onnx"));
  for (const char* target : {"in.onnx", "link.onnx"}) {
    auto r = run_cli(fmt::format("channels-last {} -o {}", path("in.onnx"), path(target)));
    EXPECT_EQ(r.exit_code, 2) << target << ": " << r.err;
    EXPECT_NE(r.err.find("refusing to overwrite the input"), std::string::npos) << r.err;
  }
  auto after = io::read_file(path("in.onnx"));
  ASSERT_TRUE(after.is_ok());
  EXPECT_EQ(after.value(), bytes);
}

}  // namespace
}  // namespace qonnx::test
