// Opsets 18..21 (docs/opset18-21.md): upgrade-opset's own adapters above the ONNX library's opset 17
// keep the numbers (exec of the upgraded model equals exec of the original) at every step, in bodies
// too; models above the target keep their opset; the type check works above 17. onnxruntime runs the
// upgraded forms in ctest ort_opset21 (tests/ort/opset21_cases.txt) and differential_*_opset21.
#include <cmath>
#include <random>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/targets/target.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* const kReduceOps[] = {"ReduceL1",  "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                  "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};

Tensor positive_tensor(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.25f, 2.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Every op whose form changes at 18 (the nine Reduce* with and without `axes`, negative and several
// axes, keepdims both ways; Split with and without its `split` input), x[2, 3, 4] -> one output each.
void add_changed_ops(io::ModelBuilder& b, const std::string& prefix) {
  int k = 0;
  for (const char* op : kReduceOps) {
    const std::string base = prefix + op;
    b.output(base + "_a", DType::kFloat).output(base + "_b", DType::kFloat).output(base + "_c", DType::kFloat);
    b.node(op, {"x"}, {base + "_a"}).attr("axes", std::vector<int64_t>{1}).attr("keepdims", int64_t{k++ % 2});
    b.node(op, {"x"}, {base + "_b"}).attr("axes", std::vector<int64_t>{-1, 0});
    b.node(op, {"x"}, {base + "_c"}).attr("keepdims", int64_t{0});  // no axes: all of them
  }
  b.output(prefix + "split_even_0", DType::kFloat).output(prefix + "split_even_1", DType::kFloat);
  b.node("Split", {"x"}, {prefix + "split_even_0", prefix + "split_even_1"}).attr("axis", int64_t{2});
  b.initializer(prefix + "sizes", i64({2}, {1, 2}));
  b.output(prefix + "split_sized_0", DType::kFloat).output(prefix + "split_sized_1", DType::kFloat);
  b.node("Split", {"x", prefix + "sizes"}, {prefix + "split_sized_0", prefix + "split_sized_1"}).attr("axis", int64_t{1});
}

// The changed ops at `opset`, in the main graph and again inside an If's branches.
io::ModelBuilder changed_ops_at(int64_t opset) {
  io::ModelBuilder b(opset);
  b.input("x", DType::kFloat, {2, 3, 4}).input("c", DType::kBool, {});
  add_changed_ops(b, "");
  io::ModelBuilder then_branch(opset), else_branch(opset);
  then_branch.output("t", DType::kFloat);
  then_branch.node("ReduceMax", {"x"}, {"t"}).attr("axes", std::vector<int64_t>{2}).attr("keepdims", int64_t{0});
  else_branch.output("e", DType::kFloat);
  else_branch.node("ReduceLogSumExp", {"x"}, {"e"}).attr("axes", std::vector<int64_t>{0, 2}).attr("keepdims", int64_t{0});
  b.output("branch", DType::kFloat);
  b.node("If", {"c"}, {"branch"}).attr("then_branch", then_branch).attr("else_branch", else_branch);
  return b;
}

void expect_same_outputs(const ir::Model& a, const ir::Model& b, const std::string& what) {
  for (bool c : {true, false}) {
    std::map<std::string, Tensor> feeds = {{"x", positive_tensor({2, 3, 4}, 7)}, {"c", make<bool>(DType::kBool, {}, {c})}};
    auto ea = exec::Executor::create(a);
    auto eb = exec::Executor::create(b);
    ASSERT_TRUE(ea.is_ok()) << what << ": " << ea.status().to_string();
    ASSERT_TRUE(eb.is_ok()) << what << ": " << eb.status().to_string();
    auto ra = ea->run(feeds);
    auto rb = eb->run(feeds);
    ASSERT_TRUE(ra.is_ok()) << what << ": " << ra.status().to_string();
    ASSERT_TRUE(rb.is_ok()) << what << ": " << rb.status().to_string();
    ASSERT_EQ(ra->outputs.size(), rb->outputs.size());
    for (size_t k = 0; k < ra->outputs.size(); ++k) {
      EXPECT_TRUE(ra->outputs[k].identical(rb->outputs[k])) << what << ": output " << k << " differs";
    }
  }
}

// Counts nodes of every graph that still carry the attribute `attr` / read input #`input`.
int count_nodes(const ir::Model& m, const std::function<bool(const ir::Node&)>& pred) {
  int n = 0;
  m.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& node : g.nodes()) n += pred(*node);
  });
  return n;
}

bool is_reduce(const ir::Node& n) {
  return std::any_of(std::begin(kReduceOps), std::end(kReduceOps), [&](const char* op) { return n.op_type() == op; });
}

TEST(UpgradeOpset21, ChangedOpsKeepTheNumbersAtEveryStepFromEveryStart) {
  for (int64_t from : {13, 16, 17}) {
    for (int64_t to = 18; to <= 21; ++to) {
      const std::string what = "opset " + std::to_string(from) + " -> " + std::to_string(to);
      auto original = changed_ops_at(from).build();
      ASSERT_TRUE(original.is_ok()) << what << ": " << original.status().to_string();
      ir::Model upgraded = changed_ops_at(from).build().value();
      auto r = run_passes(upgraded, "upgrade-opset{version=" + std::to_string(to) + "}");
      ASSERT_TRUE(r.is_ok()) << what << ": " << r.status().to_string();
      EXPECT_EQ(upgraded.opset(""), to) << what;
      EXPECT_EQ(upgraded.header().ir_version(), to >= 21 ? 10 : to >= 19 ? 9 : 8) << what;
      // Every Reduce* with axes reads them from input #1 now; the attribute is gone everywhere.
      EXPECT_EQ(count_nodes(upgraded, [](const ir::Node& n) { return is_reduce(n) && n.has_attr("axes"); }), 0) << what;
      EXPECT_EQ(count_nodes(upgraded, [](const ir::Node& n) { return is_reduce(n) && n.input(1) != nullptr; }), 2 * 9 + 2) << what;
      EXPECT_EQ(count_nodes(upgraded, [](const ir::Node& n) { return n.op_type() == "Split" && n.attr<int64_t>("num_outputs", 0).value() == 2; }), 1)
          << what;
      expect_same_outputs(original.value(), upgraded, what);
      // The result reloads (serialized and parsed again) with the same numbers.
      auto reloaded = io::load_model_from_bytes(io::serialize_model(upgraded).value(), ".");
      ASSERT_TRUE(reloaded.is_ok()) << what << ": " << reloaded.status().to_string();
      expect_same_outputs(original.value(), reloaded.value(), what + " (reloaded)");
    }
  }
}

TEST(UpgradeOpset21, StepwiseEqualsDirect) {
  ir::Model direct = changed_ops_at(13).build().value();
  ASSERT_TRUE(run_passes(direct, "upgrade-opset{version=21}").is_ok());
  ir::Model stepwise = changed_ops_at(13).build().value();
  ASSERT_TRUE(run_passes(stepwise, "upgrade-opset{version=17},upgrade-opset{version=18},upgrade-opset{version=20},"
                                   "upgrade-opset{version=21}").is_ok());
  EXPECT_EQ(io::serialize_model(direct).value(), io::serialize_model(stepwise).value());
}

TEST(UpgradeOpset21, ModelsAboveTheTargetKeepTheirOpsetWithANote) {
  ir::Model m = changed_ops_at(13).build().value();
  ASSERT_TRUE(run_passes(m, "upgrade-opset{version=19}").is_ok());
  const std::string before = io::serialize_model(m).value();
  pass::PassContext ctx;
  auto r = run_passes(m, "upgrade-opset{version=13}", ctx);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r.value());
  EXPECT_EQ(io::serialize_model(m).value(), before);
  ASSERT_EQ(ctx.diagnostics().size(), 1u);
  EXPECT_FALSE(ctx.diagnostics()[0].warning);
  EXPECT_NE(ctx.diagnostics()[0].message.find("opset 19 is above the target 13: kept"), std::string::npos)
      << ctx.diagnostics()[0].message;
}

// GridSample-16 -> 20 renames its modes; DFT-17 -> 20 moves `axis` to input #2 (onnxruntime runs both
// in ort_opset21: qonnx-cc has no kernel for them).
TEST(UpgradeOpset21, GridSampleModesAndDftAxis) {
  io::ModelBuilder b(17);
  b.input("x", DType::kFloat, {1, 1, 3, 3}).input("grid", DType::kFloat, {1, 2, 2, 2}).input("s", DType::kFloat, {1, 8, 1});
  for (const char* mode : {"bilinear", "bicubic", "nearest"}) {
    b.output(std::string("g_") + mode, DType::kFloat);
    b.node("GridSample", {"x", "grid"}, {std::string("g_") + mode}).attr("mode", mode).name(std::string("gs_") + mode);
  }
  b.output("g_default", DType::kFloat);
  b.node("GridSample", {"x", "grid"}, {"g_default"}).name("gs_default");
  b.output("d_default", DType::kFloat).output("d_axis", DType::kFloat);
  b.node("DFT", {"s"}, {"d_default"}).name("dft_default");
  b.node("DFT", {"s"}, {"d_axis"}).attr("axis", int64_t{-2}).attr("inverse", int64_t{1}).name("dft_axis");
  ir::Model m = b.build().value();
  ASSERT_TRUE(run_passes(m, "upgrade-opset{version=20}").is_ok());
  std::map<std::string, std::string> modes;
  std::map<std::string, int64_t> axes;
  for (const auto& n : m.graph().nodes()) {
    if (n->op_type() == "GridSample") modes[n->name()] = n->attr_string("mode", "(default)");
    if (n->op_type() != "DFT") continue;
    EXPECT_FALSE(n->has_attr("axis")) << n->describe();
    ASSERT_NE(n->input(2), nullptr) << n->describe();
    EXPECT_EQ(n->input(1), nullptr) << n->describe();
    // The axis is a scalar: Squeeze of a one-element initializer (folded by fold-constants).
    const ir::Node* squeeze = n->input(2)->producer();
    ASSERT_NE(squeeze, nullptr);
    EXPECT_EQ(squeeze->op_type(), "Squeeze");
    axes[n->name()] = m.graph().initializer_tensor(squeeze->input(0)).value().data<int64_t>()[0];
    EXPECT_EQ(n->attr<int64_t>("inverse", 0).value(), n->name() == "dft_axis" ? 1 : 0);
  }
  EXPECT_EQ(modes, (std::map<std::string, std::string>{
                       {"gs_bilinear", "linear"}, {"gs_bicubic", "cubic"}, {"gs_nearest", "nearest"}, {"gs_default", "linear"}}));
  EXPECT_EQ(axes, (std::map<std::string, int64_t>{{"dft_default", 1}, {"dft_axis", -2}}));
}

// GroupNormalization-18 -> 21: scale and bias per group become per channel (each value repeated
// C / num_groups times, computed from X's shape): the same numbers, whether X's shape is known or not.
TEST(UpgradeOpset21, GroupNormalizationScaleAndBiasBecomePerChannel) {
  for (bool shape_known : {true, false}) {
    io::ModelBuilder b(18);
    b.input("x", DType::kFloat, shape_known ? Dims{2, 6, 3} : Dims{-1, 6, 3}).output("y", DType::kFloat);
    b.initializer("scale", f32({3}, {1.5f, -2.5f, 3.5f})).initializer("bias", f32({3}, {-1, 0, 1}));
    b.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}).attr("num_groups", int64_t{3}).attr("epsilon", 1e-3f).name("gn");
    auto original = b.build().value();
    ir::Model upgraded = b.build().value();
    ASSERT_TRUE(run_passes(upgraded, "upgrade-opset{version=21}").is_ok());
    const Tensor x = positive_tensor({2, 6, 3}, 3);
    auto ra = exec::Executor::create(original).value().run({{"x", x}});
    auto rb = exec::Executor::create(upgraded).value().run({{"x", x}});
    ASSERT_TRUE(ra.is_ok() && rb.is_ok()) << ra.status().to_string() << rb.status().to_string();
    EXPECT_TRUE(ra->outputs[0].identical(rb->outputs[0]));
    // Per group, the kernel of 21 rejects the parameters: the adapter is what makes them agree.
    ir::Model relabelled = b.build().value();
    relabelled.mutable_header().mutable_opset_import(0)->set_version(21);
    auto rc = exec::Executor::create(relabelled).value().run({{"x", x}});
    ASSERT_FALSE(rc.is_ok());
    EXPECT_NE(rc.status().to_string().find("one value per channel"), std::string::npos) << rc.status().to_string();
  }

  io::ModelBuilder bad(18);
  bad.input("x", DType::kFloat, {1, 6, 2}).output("y", DType::kFloat);
  bad.initializer("scale", f32({3}, {1, 1, 1})).initializer("bias", f32({3}, {0, 0, 0}));
  bad.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}).name("gn_without_groups");
  ir::Model bm = bad.build().value();
  auto r = run_passes(bm, "upgrade-opset{version=21}");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnsupported);
  for (const char* part : {"gn_without_groups", "GroupNormalization", "opset 20 -> 21", "num_groups"})
    EXPECT_NE(r.status().to_string().find(part), std::string::npos) << part << " in " << r.status().to_string();
}

// An op of a custom domain that neither the ONNX library nor qonnx-cc knows stays as it is through
// the library's converter (which stops at op names it has no schema for) and the own adapters.
TEST(UpgradeOpset21, CustomDomainOpsUnknownToTheLibraryPassThrough) {
  io::ModelBuilder b(11);
  b.import("my.domain", 1);
  b.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat).output("z", DType::kFloat);
  b.node("NoSchemaAnywhere", {"x"}, {"y"}, "my.domain").attr("alpha", 2.0f).name("custom");
  b.node("ReduceMax", {"x"}, {"z"}).attr("axes", std::vector<int64_t>{1});
  ir::Model m = b.build().value();
  auto r = run_passes(m, "upgrade-opset{version=21}");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(m.opset(""), 21);
  bool kept = false;
  for (const auto& n : m.graph().nodes())
    kept |= n->name() == "custom" && n->domain() == "my.domain" && n->op_type() == "NoSchemaAnywhere" && n->attr<float>("alpha", 0).value() == 2.0f;
  EXPECT_TRUE(kept);
  EXPECT_FALSE(m.opset("qonnx-cc.upgrade-opset.parked").has_value());
}

TEST(UpgradeOpset21, TargetsAndTheirRange) {
  const std::string qdq21 = targets::pipeline_text("qdq", 21).value();
  EXPECT_NE(qdq21.find("upgrade-opset{version=17},fold-constants{skip-quantizers=1},infer-shapes,upgrade-opset{version=21},"
                       "lower-quant{target=qdq}"),
            std::string::npos)
      << qdq21;
  EXPECT_NE(targets::pipeline_text("qdq", 15).value().find("upgrade-opset{version=15},fold-constants"), std::string::npos);
  EXPECT_EQ(targets::pipeline_text("qdq").value(), targets::pipeline_text("qdq", 13).value());
  for (int64_t bad : {12, 22}) EXPECT_EQ(targets::pipeline_text("ascend", bad).status().code(), Code::kUsage) << bad;
  EXPECT_EQ(targets::pipeline_text("fold").value().find("upgrade-opset"), std::string::npos);
  EXPECT_EQ(targets::pipeline_text("fold", 21).value().rfind("freeze-initializer-inputs,upgrade-opset{version=17},", 0), 0u);
  for (const char* t : {"qdq", "ngraph", "ascend", "fold", "qonnx"}) EXPECT_TRUE(pass::parse_pipeline(targets::pipeline_text(t, 21).value()).is_ok()) << t;
}

// The type check above the library's opsets: the library's newest schema plus the 18..21 widenings.
TEST(UpgradeOpset21, TypeCheckAboveSeventeen) {
  // Bindings and fixed types are still checked at 21 (they were not checked at all above 17 before).
  NodeCase div{"Div", "", 21, {}, {f32({2}, {1, 2}), make<double>(DType::kDouble, {}, {2.0})}};
  expect_error(run_node(div), Code::kInvalidModel, "must be one type");
  NodeCase reshape{"Reshape", "", 21, {}, {f32({2}, {1, 2}), make<int32_t>(DType::kInt32, {1}, {2})}};
  expect_error(run_node(reshape), Code::kInvalidModel, "with the types opsets up to 21 add");
  // A widening applies from its opset on: IsInf takes float16 from 20.
  NodeCase isinf{"IsInf", "", 19, {}, {make<uint16_t>(DType::kFloat16, {1}, {0x7c00})}};
  expect_error(run_node(isinf), Code::kInvalidModel, "is float16, which IsInf");
  isinf.opset = 20;
  auto r = run_node(isinf);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r.value()[0].data<bool>()[0]);
}

// Input models at 18..21 load, run, pass `check` and `info`, and convert (keeping their opset).
class OpsetAboveLibrary : public TempDirTest {};

TEST_F(OpsetAboveLibrary, LoadExecCheckInfoAndConvert) {
  for (int64_t opset = 18; opset <= 21; ++opset) {
    const std::string what = "opset " + std::to_string(opset);
    io::ModelBuilder b(opset);
    b.import("qonnx.custom_op.general", 1);
    b.input("x", DType::kFloat, {2, 3, 4}).output("y", DType::kFloat);
    b.initializer("qs", f32s(0.25f)).initializer("qz", f32s(0)).initializer("qb", f32s(4)).initializer("axes", i64({1}, {1}));
    b.node("Quant", {"x", "qs", "qz", "qb"}, {"q"}, "qonnx.custom_op.general").attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
    b.node("ReduceMax", {"q", "axes"}, {"y"}).attr("keepdims", int64_t{0});
    const std::string in = path("m" + std::to_string(opset) + ".onnx"), out = path("m" + std::to_string(opset) + ".qdq.onnx");
    ASSERT_TRUE(io::save_model(b.build().value(), in).is_ok());
    for (const std::string& cmd : {"info " + in, "check " + in, "exec " + in + " --random-inputs -q",
                                   "convert " + in + " -o " + out + " --check 2 -q"}) {
      CliResult r = run_cli(cmd);
      EXPECT_EQ(r.exit_code, 0) << what << ": qonnx-cc " << cmd << "\n" << r.out << r.err;
    }
    auto converted = io::load_model(out);
    ASSERT_TRUE(converted.is_ok()) << what;
    EXPECT_EQ(converted->opset(""), opset) << what << ": the default target 13 never lowers it";
  }
}

}  // namespace
}  // namespace qonnx::test
