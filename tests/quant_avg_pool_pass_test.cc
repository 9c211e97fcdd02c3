// QuantAvgPool2d through the passes: lower-custom-ops' standard form equals the kernel bit for bit
// (executor and onnxruntime).
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

namespace fs = std::filesystem;

const char* kGeneral = "qonnx.custom_op.general";

struct PoolConfig {
  int64_t kernel, stride, ibits, obits;
  bool nhwc;
};

// Shifts 0 to 30, kernels 1 to 4, strides 1 to 3, both layouts.
std::vector<PoolConfig> pool_configs() {
  std::vector<PoolConfig> configs;
  int i = 0;
  for (int64_t kernel : {1, 2, 3, 4})
    for (int64_t stride : {1, 2, 3})
      for (auto [ibits, obits] : {std::pair<int64_t, int64_t>{4, 40}, {4, 5}, {8, 2}, {32, 3}})
        configs.push_back({kernel, stride, ibits, obits, (i++ % 3) == 1});
  return configs;
}

// x (2, 3, 7, 8) -> one QuantAvgPool2d per config (NHWC ones between Transposes), each flattened,
// concatenated into y: one model (one onnxruntime run) for every config.
io::ModelBuilder pooling_model(const std::vector<PoolConfig>& configs) {
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("x", DType::kFloat, {2, 3, 7, 8}).output("y", DType::kFloat);
  b.initializer("flat", i64({1}, {-1}));
  b.node("Transpose", {"x"}, {"x_nhwc"}).attr("perm", std::vector<int64_t>{0, 2, 3, 1});
  std::vector<std::string> parts;
  for (size_t i = 0; i < configs.size(); ++i) {
    const PoolConfig& c = configs[i];
    const std::string pooled = "pooled" + std::to_string(i), part = "part" + std::to_string(i);
    b.node("QuantAvgPool2d", {c.nhwc ? "x_nhwc" : "x"}, {pooled}, kGeneral)
        .attr("kernel", c.kernel)
        .attr("stride", c.stride)
        .attr("ibits", c.ibits)
        .attr("obits", c.obits)
        .attr("data_layout", c.nhwc ? "NHWC" : "NCHW");
    b.node("Reshape", {pooled, "flat"}, {part});
    parts.push_back(part);
  }
  b.node("Concat", parts, {"y"}).attr("axis", int64_t{0});
  return b;
}

// Integers of several magnitudes, near-integers (a Div by a scale in front), exact halves, huge
// values, NaN and infinities.
Tensor hostile_input(uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor x(DType::kFloat, {2, 3, 7, 8});
  float* v = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t q = static_cast<int64_t>(rng() % 601) - 300;
    switch (rng() % 10) {
      case 0: v[i] = std::nextafter(static_cast<float>(q), 1e9f); break;
      case 1: v[i] = std::nextafter(static_cast<float>(q), -1e9f); break;
      case 2: v[i] = static_cast<float>(q) + 0.5f; break;
      case 3: v[i] = static_cast<float>(q) * 0.25f; break;
      case 4: v[i] = std::ldexp(static_cast<float>(q), 30); break;
      default: v[i] = static_cast<float>(q);
    }
  }
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[70] = std::numeric_limits<float>::infinity();
  v[200] = -std::numeric_limits<float>::infinity();
  return x;
}

Result<ir::Model> lowered(const io::ModelBuilder& b, pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model m, b.build());
  QONNX_RETURN_IF_ERROR(run_passes(m, "infer-shapes,lower-custom-ops", ctx).status());
  return m;
}

TEST(QuantAvgPool2dLowering, StandardOpsEqualTheKernelBitForBit) {
  const auto configs = pool_configs();
  const io::ModelBuilder b = pooling_model(configs);
  auto original = b.build();
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  pass::PassContext ctx;
  auto low = lowered(b, ctx);
  ASSERT_TRUE(low.is_ok()) << low.status().to_string();
  for (const auto& n : low->graph().nodes()) EXPECT_EQ(dialect::classify(*n), dialect::Op::kNone) << n->describe();
  EXPECT_TRUE(ctx.diagnostics().empty());
  auto a = exec::Executor::create(original.value()).value();
  auto c = exec::Executor::create(low.value()).value();
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const std::map<std::string, Tensor> feeds = {{"x", hostile_input(seed)}};
    auto want = a.run(feeds);
    auto got = c.run(feeds);
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    EXPECT_TRUE(want->outputs[0].identical(got->outputs[0])) << "seed " << seed;
  }
}

TEST(QuantAvgPool2dLowering, LeavesDynamicSpatialDimsWithAWarning) {
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("x", DType::kFloat, {1, 2, -1, 4}).output("y", DType::kFloat);
  b.node("QuantAvgPool2d", {"x"}, {"y"}, kGeneral).name("pool").attr("kernel", int64_t{2});
  auto m = b.build();
  ASSERT_TRUE(m.is_ok());
  pass::PassContext ctx;
  ASSERT_TRUE(run_passes(m.value(), "lower-custom-ops", ctx).is_ok());
  ASSERT_EQ(ctx.diagnostics().size(), 1u);
  EXPECT_NE(ctx.diagnostics()[0].message.find("spatial dims are not static"), std::string::npos) << ctx.diagnostics()[0].message;
  EXPECT_EQ(m->graph().nodes().front()->op_type(), "QuantAvgPool2d");
}

// onnxruntime runs the lowered form of every config and agrees with the kernel exactly.
TEST(QuantAvgPool2dLowering, OnnxruntimeEqualsTheKernel) {
  if (!onnxruntime_available()) GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path dir = fs::temp_directory_path() / ("qonnx_qavgpool_ort_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const io::ModelBuilder b = pooling_model(pool_configs());
  auto original = b.build();
  pass::PassContext ctx;
  auto low = lowered(b, ctx);
  ASSERT_TRUE(original.is_ok() && low.is_ok());
  for (uint32_t seed : {11u, 12u}) {
    const Tensor x = hostile_input(seed);
    auto want = exec::Executor::create(original.value()).value().run({{"x", x}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    EXPECT_EQ(onnxruntime_disagrees(low.value(), "x", x, want->outputs[0], 0, 0, dir / std::to_string(seed)), "");
  }
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
