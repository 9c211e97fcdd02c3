// The pass infrastructure: options declared once and parsed by the manager, one instance per pipeline
// entry from the registry given to parse_pipeline, shortcut options reaching nested passes, declared
// statistics, instrumentation hooks, the verifier named with its pass, and honest "changed".
#include <gtest/gtest.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/pass/pass.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// Reports a change on its first `changes` runs; remembers which instance ran.
class CountingPass : public pass::Pass {
 public:
  CountingPass() { ++constructed; }
  std::string name() const override { return "counting"; }
  std::string summary() const override { return "test pass"; }
  Result<bool> run(ir::Model&, pass::PassContext&) override {
    ran.push_back(this);
    ++runs_;
    return ++own_runs_ <= *changes_;
  }
  pass::Option<int64_t> changes_{this, "changes", 0, "runs that report a change"};
  pass::Statistic runs_{this, "runs", "times run"};
  int64_t own_runs_ = 0;
  static inline int constructed = 0;
  static inline std::vector<const pass::Pass*> ran;
};

// Removes the node producing the graph output: the verifier must catch it.
class BreakingPass : public pass::Pass {
 public:
  std::string name() const override { return "breaking"; }
  std::string summary() const override { return "test pass"; }
  Result<bool> run(ir::Model& m, pass::PassContext&) override {
    m.graph().remove_node(m.graph().outputs()[0]->producer());
    return true;
  }
};

class RecordingInstrumentation : public pass::Instrumentation {
 public:
  void before_pass(const pass::Pass& p, const ir::Model&) override { events.push_back("before " + p.name()); }
  Status after_pass(const pass::Pass& p, const ir::Model&, bool changed) override {
    events.push_back("after " + p.name() + (changed ? " changed" : ""));
    return Status::ok();
  }
  std::vector<std::string> events;
};

ir::Model relu_model() {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  return b.build().value();
}

TEST(PassManager, OneConfiguredInstancePerEntryFromTheGivenRegistry) {
  pass::PassRegistry registry;
  registry.add([] { return std::make_unique<CountingPass>(); });
  CountingPass::constructed = 0;
  CountingPass::ran.clear();
  auto items = pass::parse_pipeline("counting{changes=1},fixpoint(counting{changes=2})", registry);
  ASSERT_TRUE(items.is_ok()) << items.status().to_string();
  EXPECT_EQ(CountingPass::constructed, 2);
  EXPECT_FALSE(pass::PassRegistry::global().create("counting")) << "the test pass must not be global";
  ir::Model m = relu_model();
  pass::PassContext ctx;
  auto changed = pass::run_pipeline(m, items.value(), ctx);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(changed.value());
  EXPECT_EQ(CountingPass::constructed, 2) << "running must not create instances";
  // Entry 1 runs once; the group runs until its member reports no change: 3 runs.
  ASSERT_EQ(CountingPass::ran.size(), 4u);
  EXPECT_NE(CountingPass::ran[0], CountingPass::ran[1]);
  EXPECT_EQ(CountingPass::ran[1], CountingPass::ran[2]);
  EXPECT_EQ(CountingPass::ran[2], CountingPass::ran[3]);
  EXPECT_EQ(ctx.counters().at("counting").at("runs"), 4);
}

TEST(PassManager, OptionsAreTypedAndListed) {
  auto p = pass::PassRegistry::global().create("fold-constants");
  ASSERT_TRUE(p);
  auto specs = p->options();
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "max-bytes");
  EXPECT_EQ(specs[0].type, "int");
  EXPECT_EQ(specs[0].default_value, "67108864");
  EXPECT_EQ(specs[1].type, "bool");
  EXPECT_EQ(specs[2].name, "qdq");
  EXPECT_EQ(specs[3].name, "shapes");
  EXPECT_TRUE(p->configure({{"max-bytes", "16"}, {"skip-quantizers", "true"}}).is_ok());
  Status neg = p->configure({{"max-bytes", "-1"}});
  EXPECT_EQ(neg.code(), Code::kUsage) << neg.to_string();
  auto lq = pass::PassRegistry::global().create("lower-quant");
  EXPECT_EQ(lq->options()[0].type, "one of: qdq|ngraph");
  EXPECT_FALSE(lq->statistics().empty());
}

TEST(PassManager, ShortcutOptionsReachPassesInsideGroups) {
  auto items = pass::parse_pipeline("cleanup,fixpoint(lower-quant,cleanup),lower-quant");
  ASSERT_TRUE(items.is_ok());
  auto n = pass::set_pass_option(items.value(), "lower-quant", "strict", "1");
  ASSERT_TRUE(n.is_ok());
  EXPECT_EQ(n.value(), 2);
  EXPECT_EQ(pass::format_pipeline(items.value()), "cleanup,fixpoint(lower-quant{strict=1},cleanup),lower-quant{strict=1}");
  auto bad = pass::set_pass_option(items.value(), "lower-quant", "strict", "maybe");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kUsage);
  auto none = pass::set_pass_option(items.value(), "upgrade-opset", "version", "14");
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(none.value(), 0);
}

TEST(PassManager, InstrumentationSeesEveryRunInOrder) {
  ir::Model m = relu_model();
  pass::PassContext ctx;
  RecordingInstrumentation rec;
  pass::TimingInstrumentation timing;
  auto items = pass::parse_pipeline("cleanup,fold-constants");
  ASSERT_TRUE(items.is_ok());
  ASSERT_TRUE(pass::run_pipeline(m, items.value(), ctx, {&rec, &timing}).is_ok());
  EXPECT_EQ(rec.events, (std::vector<std::string>{"before cleanup", "after cleanup", "before fold-constants",
                                                   "after fold-constants"}));
  ASSERT_EQ(timing.timings().size(), 2u);
  EXPECT_EQ(timing.timings()[0].pass, "cleanup");
  EXPECT_GE(timing.timings()[0].seconds, 0.0);
}

TEST(PassManager, VerifierFailureNamesThePass) {
  pass::PassRegistry registry;
  registry.add([] { return std::make_unique<BreakingPass>(); });
  ir::Model m = relu_model();
  pass::PassContext ctx;
  auto r = pass::run_pipeline(m, pass::parse_pipeline("breaking", registry).value(), ctx);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("[breaking]"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().to_string().find("verifier after the pass"), std::string::npos) << r.status().to_string();
}

// A quantizer lower-quant keeps (Trunc v2 whose scale is a runtime input) is no change, so a fixpoint
// group holding lower-quant settles at once.
TEST(PassManager, LowerQuantReportsNoChangeForNodesItLeaves) {
  const char* q = "qonnx.custom_op.general";
  io::ModelBuilder b(13);
  b.import(q, 2);
  b.input("x", DType::kFloat, {2}).input("s", DType::kFloat, {}).output("y", DType::kFloat, {2});
  b.initializer("z", f32s(0)).initializer("ib", f32s(8));
  b.initializer("os", f32s(1e38f)).initializer("ob", f32s(4));
  b.node("Trunc", {"x", "s", "z", "ib", "os", "ob"}, {"y"}, q);
  ir::Model m = b.build().value();
  pass::PassContext ctx;
  RecordingInstrumentation rec;
  auto r = pass::run_pipeline(m, pass::parse_pipeline("fixpoint(lower-quant)").value(), ctx, {&rec});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r.value());
  EXPECT_EQ(rec.events, (std::vector<std::string>{"before lower-quant", "after lower-quant"}));
  EXPECT_EQ(ctx.counters().at("lower-quant").at("left"), 1);
  EXPECT_EQ(m.graph().nodes().front()->op_type(), "Trunc");
}

}  // namespace
}  // namespace qonnx::test
