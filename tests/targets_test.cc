// The targets layer: every built-in target builds its pipeline from the pass registry, the registry
// finds, lists and hands checks to targets, and a new target needs nothing but itself (a throwaway one
// here, with its own pipeline and check, registered in a local registry).
#include <gtest/gtest.h>

#include "qonnx/demo/demo_model.h"
#include "qonnx/exec/kernel.h"
#include "qonnx/targets/target.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

TEST(Targets, BuiltInTargetsInTheirOrder) {
  EXPECT_EQ(targets::TargetRegistry::global().names(), (std::vector<std::string>{"qdq", "ngraph", "fold", "ascend", "qonnx", "finn", "hls4ml"}));
}

TEST(Targets, EveryPipelineParsesBackToItself) {
  for (const std::string& name : targets::TargetRegistry::global().names())
    for (int64_t opset : {0, 13, 17, 19, 21}) {
      auto text = targets::pipeline_text(name, opset);
      ASSERT_TRUE(text.is_ok()) << name << " " << opset << ": " << text.status().to_string();
      auto parsed = pass::parse_pipeline(text.value());
      ASSERT_TRUE(parsed.is_ok()) << text.value();
      EXPECT_EQ(pass::format_pipeline(parsed.value()), text.value());
    }
}

TEST(Targets, OpsetStepsAndTheirBounds) {
  // Up to the ONNX library's opset 17 its converter alone; above, upgrade-opset's adapters after it.
  EXPECT_NE(targets::pipeline_text("qdq", 15).value().find(
                "upgrade-opset{version=15},fold-constants{skip-quantizers=1},infer-shapes,lower-quant{target=qdq}"),
            std::string::npos);
  EXPECT_NE(targets::pipeline_text("ngraph", 20).value().find(
                "upgrade-opset{version=17},fold-constants{skip-quantizers=1},infer-shapes,upgrade-opset{version=20},"),
            std::string::npos);
  // fold and qonnx keep the model's opset unless one is asked for.
  EXPECT_EQ(targets::pipeline_text("qonnx").value().find("upgrade-opset"), std::string::npos);
  EXPECT_EQ(targets::pipeline_text("qonnx", 13).value().rfind("freeze-initializer-inputs,upgrade-opset{version=13},", 0), 0u);
  for (int64_t bad : {1, 12, 22})
    for (const std::string& name : targets::TargetRegistry::global().names())
      EXPECT_EQ(targets::pipeline_text(name, bad).status().code(), Code::kUsage) << name << " " << bad;
  EXPECT_EQ(targets::pipeline_text("tflite").status().code(), Code::kUsage);
}

TEST(Targets, OnlyTheRuntimeTargetsReportQonnxOpsLeft) {
  const auto& registry = targets::TargetRegistry::global();
  for (const char* name : {"qdq", "ngraph", "ascend"}) EXPECT_TRUE(registry.find(name)->standard_onnx_result()) << name;
  for (const char* name : {"fold", "qonnx"}) EXPECT_FALSE(registry.find(name)->standard_onnx_result()) << name;
}

TEST(Targets, AscendChecksHandWrittenPipelinesWithItsRewrite) {
  const auto& registry = targets::TargetRegistry::global();
  auto with = pass::parse_pipeline("fold-constants,fixpoint(cleanup,ascend-quant-matmul)");
  auto without = pass::parse_pipeline("fold-constants,cleanup");
  ASSERT_TRUE(with.is_ok() && without.is_ok());
  ASSERT_NE(registry.owner_of(with.value()), nullptr);
  EXPECT_EQ(registry.owner_of(with.value())->name(), "ascend");
  EXPECT_EQ(registry.owner_of(without.value()), nullptr);
}

TEST(Targets, TheirOpsAreRegistered) {
  // nGraph and Ascend kernels come from their targets (register_all), not from the core families.
  const auto& kernels = exec::KernelRegistry::global();
  EXPECT_NE(kernels.find("qonnx_cc.ngraph", "Quantize", 1), nullptr);
  EXPECT_NE(kernels.find("qonnx_cc.ascend", "TransQuantParamV2", 1), nullptr);
  exec::KernelRegistry core;
  targets::TargetRegistry local;
  targets::register_all_targets(local);
  EXPECT_EQ(core.find("qonnx_cc.ngraph", "Quantize", 1), nullptr);
  local.register_ops(core);
  EXPECT_NE(core.find("qonnx_cc.ngraph", "Quantize", 1), nullptr);
  EXPECT_NE(core.find("", "QuantBatchMatMul", 13), nullptr);
}

// A target written the way docs/extending.md says: one class, nothing else touched.
class ProbeTarget : public targets::Target {
 public:
  std::string name() const override { return "probe"; }
  std::string summary() const override { return "weights folded, then cleaned"; }
  bool standard_onnx_result() const override { return false; }
  Result<std::vector<pass::PipelineItem>> pipeline(const targets::PipelineOptions& options,
                                                   const pass::PassRegistry& registry) const override {
    pass::PipelineBuilder b(registry);
    if (options.opset) targets::add_opset_steps(b, options.opset);
    b.add("fold-quant-weights").add("cleanup");
    return b.build();
  }
  Result<targets::CheckOutcome> check(const ir::Model& converted, const targets::CheckRequest& request) const override {
    ++checks;
    return targets::check_outputs_match(converted, request);
  }
  mutable int checks = 0;
};

TEST(Targets, ANewTargetIsOneClass) {
  targets::TargetRegistry registry;
  registry.add(std::make_unique<ProbeTarget>());
  const targets::Target* probe = registry.find("probe");
  ASSERT_NE(probe, nullptr);
  auto pipeline = probe->pipeline({}, pass::PassRegistry::global());
  ASSERT_TRUE(pipeline.is_ok()) << pipeline.status().to_string();
  EXPECT_EQ(pass::format_pipeline(pipeline.value()), "fold-quant-weights,cleanup");
  auto upgraded = probe->pipeline({15}, pass::PassRegistry::global());
  ASSERT_TRUE(upgraded.is_ok());
  EXPECT_EQ(pass::format_pipeline(upgraded.value()).rfind("upgrade-opset{version=15},", 0), 0u);

  // Convert the demo model with it and check the result the way `convert --check` does.
  auto demo = demo::build_demo_model();
  ASSERT_TRUE(demo.is_ok());
  ir::Model model = std::move(demo).value();
  pass::PassContext ctx;
  ASSERT_TRUE(pass::run_pipeline(model, pipeline.value(), ctx).is_ok());
  targets::CheckRequest request;
  request.runs = 2;
  request.pipeline = &pipeline.value();
  request.original = [] { return demo::build_demo_model(); };
  auto outcome = probe->check(model, request);
  ASSERT_TRUE(outcome.is_ok()) << outcome.status().to_string();
  EXPECT_EQ(static_cast<const ProbeTarget*>(probe)->checks, 1);
  EXPECT_FALSE(outcome->failed) << outcome->failure;
  ASSERT_FALSE(outcome->lines.empty());
  EXPECT_NE(outcome->lines[0].find(": ok over 2 runs"), std::string::npos) << outcome->lines[0];
}

TEST(Targets, BuilderReportsTheFirstBadEntry) {
  pass::PipelineBuilder b;
  b.add("cleanup").add("lower-quant", {{"target", "tflite"}}).add("no-such-pass");
  auto built = b.build();
  ASSERT_FALSE(built.is_ok());
  EXPECT_EQ(built.status().code(), Code::kUsage);
  EXPECT_NE(built.status().message().find("tflite"), std::string::npos) << built.status().message();
}

TEST(Targets, CheckLinesKeepTheirFormat) {
  targets::CheckOutcome out;
  analysis::OutputCheck c;
  c.name = "y";
  c.max_abs_error = 0.5;
  c.max_rel_error = 0.25;
  c.mismatches = 1;
  c.elements = 8;
  c.ok = false;
  targets::append_check_lines(out, {c}, 4, " against X", "beyond atol 0 / rtol 0");
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "check y: MISMATCH over 4 runs against X: max abs error 0.5, max rel error 0.25, 1 of 8 elements "
                          "(12.5%) beyond atol 0 / rtol 0");
}

}  // namespace
}  // namespace qonnx::test
