// If/Loop/Scan bodies in the IR: implicit inputs, mutation API, passes inside bodies, execution,
// conversion of every target, external data inside bodies, and onnxruntime agreement.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/cli.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kQonnx = "qonnx.custom_op.general";

// A 4-bit signed Quant with scale `s` (the caller provides the s/z/b values by name).
void quant(io::ModelBuilder& b, const std::string& x, const std::string& s, const std::string& out) {
  b.node("Quant", {x, s, "qz", "qbits"}, {out}, kQonnx).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
}

void quant_params(io::ModelBuilder& b) {
  b.initializer("qz", f32s(0.0f)).initializer("qbits", f32s(4.0f));
}

// Main: xq = Quant(x); y = If(sum(x) > 0) then xq + W else xq * W. W and xq are read only in the branches.
io::ModelBuilder if_with_outer_values() {
  io::ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"xq", "W"}, {"then_out"});
  then_b.output("then_out", DType::kFloat, {2, 3});
  else_b.node("Mul", {"xq", "W"}, {"else_out"});
  else_b.output("else_out", DType::kFloat, {2, 3});
  io::ModelBuilder m(13);
  m.import(kQonnx, 1);
  m.input("x", DType::kFloat, {2, 3}).output("y", DType::kFloat, {2, 3});
  m.initializer("W", f32({2, 3}, {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f})).initializer("qs", f32s(0.25f));
  quant_params(m);
  quant(m, "x", "qs", "xq");
  m.node("ReduceSum", {"x"}, {"total"}).attr("keepdims", 0);
  m.initializer("zero", f32s(0.0f));
  m.node("Greater", {"total", "zero"}, {"cond"});
  m.node("If", {"cond"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
  return m;
}

// Loop 3 times: state = Quant(state) + 1 with a Quant in the body (scale from the outer graph), the
// quantized values as scan output; then an If whose branches each hold a Quant.
io::ModelBuilder quant_in_bodies() {
  io::ModelBuilder body(13);
  body.input("i", DType::kInt64, {}).input("c", DType::kBool, {}).input("s_in", DType::kFloat, {2, 3});
  body.initializer("one", f32s(1.0f));
  quant(body, "s_in", "qs", "body_q");
  body.node("Add", {"body_q", "one"}, {"s_out"});
  body.node("Identity", {"c"}, {"c_out"});
  body.output("c_out", DType::kBool, {}).output("s_out", DType::kFloat, {2, 3}).output("body_q", DType::kFloat, {2, 3});
  io::ModelBuilder then_b(13), else_b(13);
  quant(then_b, "final", "qs", "then_q");
  then_b.output("then_q", DType::kFloat, {2, 3});
  else_b.node("Neg", {"final"}, {"negated"});
  quant(else_b, "negated", "qs_else", "else_q");
  else_b.output("else_q", DType::kFloat, {2, 3});
  io::ModelBuilder m(13);
  m.import(kQonnx, 1);
  m.input("x", DType::kFloat, {2, 3});
  m.output("y", DType::kFloat, {2, 3}).output("scanned", DType::kFloat, {3, 2, 3});
  m.initializer("qs", f32s(0.5f)).initializer("qs_else", f32s(0.25f)).initializer("trips", i64({}, {3}));
  quant_params(m);
  m.node("Loop", {"trips", "", "x"}, {"final", "scanned"}).attr("body", body);
  m.node("ReduceSum", {"x"}, {"total"}).attr("keepdims", 0);
  m.initializer("zero", f32s(0.0f));
  m.node("Greater", {"total", "zero"}, {"cond"});
  m.node("If", {"cond"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
  return m;
}

ir::Model build(const io::ModelBuilder& b) {
  auto m = b.build();
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  return std::move(m).value();
}

std::vector<Tensor> run(const ir::Model& m, const std::map<std::string, Tensor>& inputs) {
  auto ex = exec::Executor::create(m);
  EXPECT_TRUE(ex.is_ok()) << ex.status().to_string();
  if (!ex.is_ok()) return {};
  auto r = ex->run(inputs);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r->outputs : std::vector<Tensor>{};
}

size_t count_op(const ir::Model& m, const std::string& op) {
  size_t n = 0;
  m.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& node : g.nodes()) n += node->op_type() == op;
  });
  return n;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("qonnx_subgraph_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(SubgraphIr, OuterValuesReadInBodiesAreImplicitUses) {
  ir::Model m = build(if_with_outer_values());
  ir::Graph& g = m.graph();
  ir::Node* if_node = nullptr;
  for (const auto& n : g.nodes())
    if (n->op_type() == "If") if_node = n.get();
  ASSERT_NE(if_node, nullptr);
  ASSERT_EQ(if_node->bodies().size(), 2u);
  ir::Value* w = g.find_value("W");
  ir::Value* xq = g.find_value("xq");
  // Both branches read W and xq; each value has one (implicit) use: the If node.
  ASSERT_EQ(w->uses().size(), 1u);
  EXPECT_EQ(w->uses()[0].node, if_node);
  EXPECT_EQ(w->uses()[0].input_index, ir::kImplicitInput);
  ASSERT_EQ(xq->uses().size(), 1u);
  auto implicit = if_node->implicit_inputs();
  ASSERT_EQ(implicit.size(), 2u);
  EXPECT_EQ(implicit[0], xq);
  EXPECT_EQ(implicit[1], w);
  ir::Graph* then_b = if_node->body("then_branch");
  ASSERT_NE(then_b, nullptr);
  EXPECT_EQ(then_b->owner(), if_node);
  EXPECT_EQ(then_b->parent(), &g);
  EXPECT_EQ(then_b->find_value("W"), nullptr);  // not defined there
  EXPECT_EQ(then_b->resolve_value("W"), w);     // but visible
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
}

TEST(SubgraphIr, MutationApiKeepsImplicitUsesExact) {
  ir::Model m = build(if_with_outer_values());
  ir::Graph& g = m.graph();
  ir::Node* if_node = g.find_value("y")->producer();
  ir::Graph* then_b = if_node->body("then_branch");
  ir::Graph* else_b = if_node->body("else_branch");
  ir::Value* w = g.find_value("W");
  // Removing the then-branch Add leaves the else branch reading W: still one implicit use.
  ir::Node* add = then_b->nodes().front().get();
  ir::Value* then_out = add->output(0);
  then_b->remove_node(add);
  EXPECT_EQ(w->uses().size(), 1u);
  // Redirecting the else branch's read of W to a new main-graph constant releases W.
  auto w2 = g.add_initializer_tensor(g.unique_name("W"), f32({2, 3}, {1, 1, 1, 1, 1, 1}));
  ASSERT_TRUE(w2.is_ok());
  EXPECT_EQ(w2.value()->name(), "W_1");
  ir::Node* mul = else_b->nodes().front().get();
  else_b->set_node_input(mul, 1, w2.value());
  EXPECT_TRUE(w->uses().empty());
  ASSERT_EQ(w2.value()->uses().size(), 1u);
  EXPECT_EQ(w2.value()->uses()[0].node, if_node);
  // replace_all_uses from the main graph reaches into the branch.
  g.replace_all_uses(w2.value(), w);
  EXPECT_EQ(mul->input(1), w);
  EXPECT_TRUE(w2.value()->uses().empty());
  // A branch output may be an outer value itself; the Add is gone, so return xq directly.
  then_b->replace_all_uses(then_out, g.find_value("xq"));
  EXPECT_EQ(then_b->outputs()[0], g.find_value("xq"));
  EXPECT_FALSE(g.find_value("xq")->is_graph_output());
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
  // unique_name avoids names defined only inside bodies.
  EXPECT_EQ(g.unique_name("else_out"), "else_out_1");
  // Removing the If node drops every implicit use it held.
  g.remove_node(if_node);
  EXPECT_TRUE(w->uses().empty());
  EXPECT_TRUE(g.find_value("xq")->uses().empty());
}

TEST(SubgraphIr, RenamesReachBodiesAndSurviveSaving) {
  ir::Model m = build(if_with_outer_values());
  ir::Graph& g = m.graph();
  ir::Node* if_node = g.find_value("y")->producer();
  ir::Graph* then_b = if_node->body("then_branch");
  // An outer value read in a body, and a value local to the body.
  ASSERT_TRUE(g.rename_value(g.find_value("W"), "weights").is_ok());
  ASSERT_TRUE(then_b->rename_value(then_b->find_value("then_out"), "sum_out").is_ok());
  // Names already used in any graph are refused.
  EXPECT_FALSE(g.rename_value(g.find_value("x"), "else_out").is_ok());
  EXPECT_FALSE(then_b->rename_value(then_b->find_value("sum_out"), "weights").is_ok());
  auto bytes = io::serialize_model(m);
  ASSERT_TRUE(bytes.is_ok());
  auto reloaded = io::load_model_from_bytes(bytes.value(), ".");
  ASSERT_TRUE(reloaded.is_ok()) << reloaded.status().to_string();
  ir::Graph& rg = reloaded->graph();
  ir::Node* rif = rg.find_value("y")->producer();
  EXPECT_EQ(rif->body("then_branch")->nodes().front()->input(1), rg.find_value("weights"));
  EXPECT_EQ(rif->body("then_branch")->outputs()[0]->name(), "sum_out");
  EXPECT_EQ(rif->body("else_branch")->nodes().front()->input(1)->name(), "weights");
  EXPECT_TRUE(analysis::validate_model(reloaded.value()).is_ok());
  // Same numbers as before the renames.
  std::map<std::string, Tensor> in{{"x", f32({2, 3}, {1, 2, 3, -1, 0.5f, 0.1f})}};
  auto a = run(build(if_with_outer_values()), in), b = run(reloaded.value(), in);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(a[0].identical(b[0]));
}

TEST(SubgraphIr, VerifierRejectsBrokenBodies) {
  ir::Model m = build(if_with_outer_values());
  ir::Graph& g = m.graph();
  ir::Node* if_node = g.find_value("y")->producer();
  ir::Graph* then_b = if_node->body("then_branch");
  // A body node reading a value nothing defines.
  ir::Value* ghost = then_b->get_or_create_value("ghost");
  then_b->set_node_input(then_b->nodes().front().get(), 0, ghost);
  Status st = pass::verify_graph(m);
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("ghost"), std::string::npos) << st.to_string();
  EXPECT_NE(st.to_string().find("body of"), std::string::npos) << st.to_string();
}

TEST(SubgraphIr, TopologicalOrderCountsImplicitInputs) {
  // The If node is stored before the producer of a value its branch reads: the order fixes it.
  io::ModelBuilder then_b(13), else_b(13);
  then_b.node("Identity", {"late"}, {"t"});
  then_b.output("t", DType::kFloat, {1});
  else_b.node("Identity", {"x"}, {"e"});
  else_b.output("e", DType::kFloat, {1});
  io::ModelBuilder m(13);
  m.input("x", DType::kFloat, {1}).input("c", DType::kBool, {}).output("y", DType::kFloat, {1});
  m.node("Neg", {"x"}, {"late"});
  m.node("If", {"c"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
  ir::Model model = build(m);
  auto order = exec::topological_order(model.graph());
  ASSERT_TRUE(order.is_ok());
  EXPECT_EQ(order.value()[0]->op_type(), "Neg");
  auto out = run(model, {{"x", f32({1}, {2.0f})}, {"c", make<uint8_t>(DType::kBool, {}, {1})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values_f32(out[0]), std::vector<float>({-2.0f}));
}

TEST(SubgraphExec, LoopWithQuantInBodyAndIfBranches) {
  ir::Model m = build(quant_in_bodies());
  // x > 0 overall: then branch.  Loop: s = round(s / 0.5) * 0.5 (clipped to [-8, 7] steps) + 1, three times.
  auto out = run(m, {{"x", f32({2, 3}, {0.2f, 0.7f, 1.3f, -0.4f, 2.6f, 9.0f})}});
  ASSERT_EQ(out.size(), 2u);
  auto q = [](float v, float s) { return std::min(7.0f, std::max(-8.0f, std::nearbyint(v / s))) * s; };
  std::vector<float> state{0.2f, 0.7f, 1.3f, -0.4f, 2.6f, 9.0f}, scanned;
  for (int it = 0; it < 3; ++it)
    for (float& v : state) {
      v = q(v, 0.5f);
      scanned.push_back(v);
      v += 1.0f;
    }
  std::vector<float> expect_y;
  for (float v : state) expect_y.push_back(q(v, 0.5f));
  EXPECT_EQ(values_f32(out[0]), expect_y);
  EXPECT_EQ(out[1].dims(), Dims({3, 2, 3}));
  EXPECT_EQ(values_f32(out[1]), scanned);
}

TEST(SubgraphExec, NestedIfInsideLoopReadsOuterValues) {
  // Loop body: if (i is even) state + bias else state - bias; bias is a main-graph initializer read
  // two levels down, the branch condition a body value read one level down.
  io::ModelBuilder then_b(13), else_b(13);
  then_b.node("Add", {"s_in", "bias"}, {"plus"});
  then_b.output("plus", DType::kFloat, {2});
  else_b.node("Sub", {"s_in", "bias"}, {"minus"});
  else_b.output("minus", DType::kFloat, {2});
  io::ModelBuilder body(13);
  body.input("i", DType::kInt64, {}).input("c", DType::kBool, {}).input("s_in", DType::kFloat, {2});
  body.initializer("two", i64({}, {2})).initializer("zero_i", i64({}, {0}));
  body.node("Mod", {"i", "two"}, {"parity"});
  body.node("Equal", {"parity", "zero_i"}, {"even"});
  body.node("If", {"even"}, {"s_out"}).attr("then_branch", then_b).attr("else_branch", else_b);
  body.node("Identity", {"c"}, {"c_out"});
  body.output("c_out", DType::kBool, {}).output("s_out", DType::kFloat, {2});
  io::ModelBuilder mb(13);
  mb.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  mb.initializer("bias", f32({2}, {10.0f, 1.0f})).initializer("trips", i64({}, {5}));
  mb.node("Loop", {"trips", "", "x"}, {"y"}).attr("body", body);
  ir::Model m = build(mb);
  ir::Value* bias = m.graph().find_value("bias");
  ASSERT_EQ(bias->uses().size(), 1u);
  EXPECT_EQ(bias->uses()[0].node->op_type(), "Loop");
  ir::Graph* loop_body = bias->uses()[0].node->body("body");
  ir::Node* inner_if = loop_body->find_value("s_out")->producer();
  EXPECT_EQ(inner_if->implicit_inputs().size(), 2u);  // s_in (one level) and bias (two levels)
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
  // +bias, -bias, +bias, -bias, +bias: x + bias.
  auto out = run(m, {{"x", f32({2}, {1.0f, 2.0f})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values_f32(out[0]), std::vector<float>({11.0f, 3.0f}));
  // cleanup keeps bias (used two levels down) and the passes still verify.
  ASSERT_TRUE(run_passes(m, "cleanup").is_ok());
  EXPECT_NE(m.graph().find_value("bias"), nullptr);
  EXPECT_TRUE(m.graph().find_value("bias")->is_initializer());
}

TEST(SubgraphExec, ScanCarriesStateAndStacksOutputs) {
  // Cumulative sum over the rows of xs (Scan 9, and a reversed direction).
  for (int reverse : {0, 1}) {
    io::ModelBuilder body(13);
    body.input("s_in", DType::kFloat, {2}).input("row", DType::kFloat, {2});
    body.node("Add", {"s_in", "row"}, {"s_out"});
    body.node("Identity", {"s_out"}, {"partial"});
    body.output("s_out", DType::kFloat, {2}).output("partial", DType::kFloat, {2});
    io::ModelBuilder mb(13);
    mb.input("init", DType::kFloat, {2}).input("xs", DType::kFloat, {3, 2});
    mb.output("total", DType::kFloat, {2}).output("partials", DType::kFloat, {3, 2});
    mb.node("Scan", {"init", "xs"}, {"total", "partials"})
        .attr("body", body)
        .attr("num_scan_inputs", 1)
        .attr("scan_input_directions", std::vector<int64_t>{reverse});
    auto out = run(build(mb), {{"init", f32({2}, {100, 200})}, {"xs", f32({3, 2}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(values_f32(out[0]), std::vector<float>({109, 212}));
    std::vector<float> partials = reverse == 0 ? std::vector<float>({101, 202, 104, 206, 109, 212})
                                               : std::vector<float>({105, 206, 108, 210, 109, 212});
    EXPECT_EQ(values_f32(out[1]), partials);
  }
}

TEST(SubgraphPasses, QuantizersInsideBodiesAreLoweredAndFolded) {
  ir::Model m = build(quant_in_bodies());
  std::map<std::string, Tensor> in{{"x", f32({2, 3}, {0.2f, 0.7f, 1.3f, -0.4f, 2.6f, 9.0f})}};
  auto before = run(m, in);
  ASSERT_TRUE(run_passes(m, "lower-quant{target=qdq},cleanup").is_ok());
  EXPECT_EQ(count_op(m, "Quant"), 0u);
  EXPECT_EQ(count_op(m, "QuantizeLinear"), 3u);
  auto after = run(m, in);
  ASSERT_EQ(after.size(), before.size());
  for (size_t k = 0; k < after.size(); ++k) EXPECT_TRUE(after[k].identical(before[k])) << k;

  // A Quant inside a branch on an outer initializer folds to a constant of that branch.
  io::ModelBuilder then_b(13), else_b(13);
  quant(then_b, "W", "qs", "wq");
  then_b.node("Mul", {"x", "wq"}, {"t"});
  then_b.output("t", DType::kFloat, {2});
  else_b.node("Identity", {"x"}, {"e"});
  else_b.output("e", DType::kFloat, {2});
  io::ModelBuilder mb(13);
  mb.import(kQonnx, 1);
  mb.input("x", DType::kFloat, {2}).input("c", DType::kBool, {}).output("y", DType::kFloat, {2});
  mb.initializer("W", f32({2}, {0.3f, -0.8f})).initializer("qs", f32s(0.5f));
  quant_params(mb);
  mb.node("If", {"c"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
  ir::Model fm = build(mb);
  std::map<std::string, Tensor> fin{{"x", f32({2}, {3, 5})}, {"c", make<uint8_t>(DType::kBool, {}, {1})}};
  auto fbefore = run(fm, fin);
  ASSERT_TRUE(run_passes(fm, "fold-quant-weights,cleanup").is_ok());
  EXPECT_EQ(count_op(fm, "Quant"), 0u);
  ir::Graph* branch = fm.graph().find_value("y")->producer()->body("then_branch");
  ASSERT_NE(branch->find_value("wq"), nullptr);
  EXPECT_TRUE(branch->find_value("wq")->is_initializer());
  // The outer W and the parameters are no longer read anywhere: cleanup removed them.
  EXPECT_EQ(fm.graph().find_value("W") ? fm.graph().find_value("W")->is_initializer() : false, false);
  auto fafter = run(fm, fin);
  ASSERT_EQ(fafter.size(), 1u);
  EXPECT_TRUE(fafter[0].identical(fbefore[0]));
  EXPECT_EQ(values_f32(fafter[0]), std::vector<float>({1.5f, -5.0f}));
}

// GraphPass::run visits the main graph and every body (parents first); Bodies::kSkip the main graph only.
class RecordingPass : public pass::GraphPass {
 public:
  explicit RecordingPass(Bodies bodies) : GraphPass(bodies) {}
  std::string name() const override { return "recording"; }
  std::string summary() const override { return "records the graphs it is given"; }
  std::vector<const ir::Graph*> seen;
  bool finished = false;

 private:
  Result<bool> run_on_graph(ir::Model&, ir::Graph& g, pass::PassContext&) override {
    seen.push_back(&g);
    return g.owner() != nullptr;  // "changes" the bodies only
  }
  Result<bool> finish(ir::Model&, bool changed, pass::PassContext&) override {
    finished = true;
    return changed;
  }
};

TEST(SubgraphPasses, GraphPassWalksEveryBodyUnlessItOptsOut) {
  ir::Model m = build(quant_in_bodies());
  std::vector<const ir::Graph*> all;
  m.graph().visit_graphs([&](const ir::Graph& g) { all.push_back(&g); });
  ASSERT_EQ(all.size(), 4u);  // main, Loop body, two If branches
  pass::PassContext ctx;
  RecordingPass walking(pass::GraphPass::Bodies::kWalk);
  EXPECT_TRUE(walking.walks_bodies());
  auto changed = walking.run(m, ctx);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_TRUE(changed.value());  // a body "changed"
  EXPECT_TRUE(walking.finished);
  EXPECT_EQ(walking.seen, all);
  RecordingPass skipping(pass::GraphPass::Bodies::kSkip);
  EXPECT_FALSE(skipping.walks_bodies());
  changed = skipping.run(m, ctx);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_FALSE(changed.value());
  EXPECT_EQ(skipping.seen, std::vector<const ir::Graph*>{&m.graph()});
}

// A converted pass (fold-constants is a GraphPass) still reaches a body: a constant Add inside an If branch folds.
TEST(SubgraphPasses, ConvertedPassFoldsInsideABody) {
  io::ModelBuilder then_b(13), else_b(13);
  then_b.initializer("a", f32({2}, {1, 2})).initializer("b", f32({2}, {3, 4}));
  then_b.node("Add", {"a", "b"}, {"ab"});
  then_b.node("Mul", {"x", "ab"}, {"t"});
  then_b.output("t", DType::kFloat, {2});
  else_b.node("Identity", {"x"}, {"e"});
  else_b.output("e", DType::kFloat, {2});
  io::ModelBuilder mb(13);
  mb.input("x", DType::kFloat, {2}).input("c", DType::kBool, {}).output("y", DType::kFloat, {2});
  mb.node("If", {"c"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
  ir::Model m = build(mb);
  EXPECT_EQ(count_op(m, "Add"), 1u);
  ASSERT_TRUE(run_passes(m, "fold-constants").is_ok());
  EXPECT_EQ(count_op(m, "Add"), 0u);
  ir::Graph* branch = m.graph().find_value("y")->producer()->body("then_branch");
  ASSERT_NE(branch->find_value("ab"), nullptr);
  EXPECT_TRUE(branch->find_value("ab")->is_initializer());
}

// Model::clone is a deep copy: the same bytes, and a pipeline run on the clone leaves the original as it was
// (bodies, initializers, annotations included) while giving the same result as on a fresh build.
TEST(SubgraphIr, CloneIsIndependentOfTheOriginal) {
  ir::Model m = build(quant_in_bodies());
  m.graph().set_finn_datatype("x", "FLOAT32");
  auto original = io::serialize_model(m);
  ASSERT_TRUE(original.is_ok()) << original.status().to_string();
  ir::Model copy = m.clone();
  auto copied = io::serialize_model(copy);
  ASSERT_TRUE(copied.is_ok());
  EXPECT_EQ(copied.value(), original.value());
  EXPECT_TRUE(pass::verify_graph(copy).is_ok()) << pass::verify_graph(copy).to_string();
  // Same ids and use order: the copy's values are its own.
  EXPECT_EQ(copy.graph().value_count(), m.graph().value_count());
  EXPECT_NE(copy.graph().find_value("qs"), m.graph().find_value("qs"));
  EXPECT_EQ(copy.graph().find_value("qs")->uses().size(), m.graph().find_value("qs")->uses().size());

  const char* pipeline = "lower-quant{target=qdq},fold-constants,cleanup,readable-names";
  ASSERT_TRUE(run_passes(copy, pipeline).is_ok());
  copy.graph().set_finn_datatype("global_in", "INT8");
  auto after = io::serialize_model(m);
  ASSERT_TRUE(after.is_ok());
  EXPECT_EQ(after.value(), original.value()) << "a pass run on the clone changed the original";
  EXPECT_EQ(m.graph().finn_datatype("x"), "FLOAT32");
  EXPECT_EQ(count_op(m, "Quant"), 3u);

  ir::Model fresh = build(quant_in_bodies());
  fresh.graph().set_finn_datatype("x", "FLOAT32");
  ASSERT_TRUE(run_passes(fresh, pipeline).is_ok());
  fresh.graph().set_finn_datatype("global_in", "INT8");
  EXPECT_EQ(io::serialize_model(copy).value(), io::serialize_model(fresh).value());
  // And the original still runs as before.
  std::map<std::string, Tensor> in{{"x", f32({2, 3}, {0.2f, 0.7f, 1.3f, -0.4f, 2.6f, 9.0f})}};
  auto a = run(m, in), b = run(copy, {{"global_in", in.at("x")}});
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(a[k].identical(b[k])) << k;
}

// Converts with every target; the If branch keeps reading W and xq, and the result passes the checker.
TEST(SubgraphCli, ConvertKeepsValuesReadOnlyInBranches) {
  fs::path dir = temp_dir("convert");
  std::ofstream(dir / "if.onnx", std::ios::binary) << if_with_outer_values().serialize();
  std::map<std::string, Tensor> in{{"x", f32({2, 3}, {1, 2, 3, -1, 0.5f, 0.1f})}};
  ir::Model original = build(if_with_outer_values());
  auto expected = run(original, in);
  for (const char* target : {"qdq", "ngraph", "ascend", "fold"}) {
    fs::path out = dir / (std::string(target) + ".onnx");
    auto r = run_cli("convert " + (dir / "if.onnx").string() + " -o " + out.string() + " --target " + target);
    ASSERT_EQ(r.exit_code, 0) << target << ": " << r.err;
    auto converted = io::load_model(out);
    ASSERT_TRUE(converted.is_ok()) << target << ": " << converted.status().to_string();
    EXPECT_TRUE(pass::verify_graph(converted.value()).is_ok()) << target;
    // The ONNX checker: nGraph's per-tensor Quantize carries an empty `axes`, which the checker rejects
    // on models without bodies too (lower-quant's business, not the subgraphs').
    const bool run_checker = std::string(target) != "ngraph";
    if (run_checker) {
      EXPECT_TRUE(analysis::validate_model(converted.value()).is_ok())
          << target << ": " << analysis::validate_model(converted.value()).to_string();
    }
    // fold precomputes weight quantizers only: the activation Quant stays, still read by the branches.
    EXPECT_EQ(count_op(converted.value(), "Quant"), std::string(target) == "fold" ? 1u : 0u) << target;
    EXPECT_NE(converted->graph().find_value("W"), nullptr) << target;
    EXPECT_EQ(count_op(converted.value(), "If"), 1u) << target;
    auto got = run(converted.value(), in);
    ASSERT_EQ(got.size(), 1u) << target;
    EXPECT_EQ(values_f32(got[0]), values_f32(expected[0])) << target;
    if (run_checker) {
      auto check = run_cli("check " + out.string());
      EXPECT_EQ(check.exit_code, 0) << target << ": " << check.err;
    }
  }
  fs::remove_all(dir);
}

// onnxruntime runs the qdq conversion of models with quantizers in Loop and If bodies and agrees
// with `qonnx-cc exec` of the originals (tools/ort/run_ort.js; skipped only without onnxruntime-node).
TEST(SubgraphCli, QdqConversionRunsInOnnxruntime) {
  fs::path run_ort = fs::path(QONNX_SOURCE_DIR) / "tools" / "ort" / "run_ort.js";
  std::string probe = "cd " + run_ort.parent_path().string() + " && node -e \"require('onnxruntime-node')\" >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) GTEST_SKIP() << "onnxruntime-node is not installed (scripts/install-ort.sh)";
  fs::path dir = temp_dir("ort");
  std::vector<std::pair<std::string, io::ModelBuilder>> models;
  models.emplace_back("if_outer", if_with_outer_values());
  models.emplace_back("quant_in_bodies", quant_in_bodies());
  for (auto& [name, builder] : models) {
    fs::path original = dir / (name + ".onnx"), converted = dir / (name + "_qdq.onnx");
    std::ofstream(original, std::ios::binary) << builder.serialize();
    auto conv = run_cli("convert " + original.string() + " -o " + converted.string() + " --target qdq");
    ASSERT_EQ(conv.exit_code, 0) << name << ": " << conv.err;
    for (int seed : {1, 2, 3, 4}) {
      fs::path inputs = dir / (name + "_in" + std::to_string(seed)), outputs = dir / (name + "_out" + std::to_string(seed));
      auto ex = run_cli("exec " + original.string() + " --random-inputs --seed " + std::to_string(seed) +
                        " --save-inputs " + inputs.string() + " --output-dir " + outputs.string() + " -q");
      ASSERT_EQ(ex.exit_code, 0) << name << ": " << ex.err;
      std::string cmd = "node " + run_ort.string() + " " + converted.string() + " --input-dir " + inputs.string() +
                        " --expect " + outputs.string() + " --atol 0 --rtol 0 -q > " + (dir / "ort.log").string() + " 2>&1";
      int rc = std::system(cmd.c_str());
      std::ifstream log(dir / "ort.log");
      std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      EXPECT_EQ(rc, 0) << name << " seed " << seed << ": " << text;
    }
  }
  fs::remove_all(dir);
}

// Initializers of a body with external data: inside the model folder they load; outside it is exit 5.
TEST(SubgraphCli, ExternalDataInBodiesFollowsTheFolderRules) {
  fs::path dir = temp_dir("external");
  fs::create_directories(dir / "model");
  std::vector<float> weights{1.5f, -2.0f};
  std::ofstream(dir / "model" / "w.bin", std::ios::binary).write(reinterpret_cast<const char*>(weights.data()), 8);
  std::ofstream(dir / "outside.bin", std::ios::binary).write(reinterpret_cast<const char*>(weights.data()), 8);
  for (const char* location : {"w.bin", "../outside.bin", "/etc/hostname"}) {
    io::ModelBuilder then_b(13), else_b(13);
    then_b.initializer("bw", f32({2}, {0, 0}));
    then_b.node("Mul", {"x", "bw"}, {"t"});
    then_b.output("t", DType::kFloat, {2});
    else_b.node("Identity", {"x"}, {"e"});
    else_b.output("e", DType::kFloat, {2});
    io::ModelBuilder mb(13);
    mb.input("x", DType::kFloat, {2}).input("c", DType::kBool, {}).output("y", DType::kFloat, {2});
    mb.node("If", {"c"}, {"y"}).attr("then_branch", then_b).attr("else_branch", else_b);
    onnx::ModelProto proto = mb.proto();
    auto* attr = proto.mutable_graph()->mutable_node(0)->mutable_attribute(0);
    ASSERT_EQ(attr->name(), "then_branch");
    onnx::TensorProto* t = attr->mutable_g()->mutable_initializer(0);
    t->clear_raw_data();
    t->clear_float_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    fs::path path = dir / "model" / "if_external.onnx";
    std::ofstream(path, std::ios::binary) << proto.SerializeAsString();
    auto r = run_cli("exec " + path.string() + " --random-inputs -q");
    auto checked = run_cli("check " + path.string());
    if (std::string(location) == "w.bin") {
      EXPECT_EQ(checked.exit_code, 0) << checked.err;
      auto model = io::load_model(path);
      ASSERT_TRUE(model.is_ok()) << model.status().to_string();
      auto out = run(model.value(), {{"x", f32({2}, {1, 2})}, {"c", make<uint8_t>(DType::kBool, {}, {1})}});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(values_f32(out[0]), std::vector<float>({1.5f, -4.0f}));
      // Saved elsewhere, the body's external tensor is written out (not left pointing at w.bin).
      auto c = run_cli("convert " + path.string() + " -o " + (dir / "copy.onnx").string() + " --target fold");
      EXPECT_EQ(c.exit_code, 0) << c.err;
      auto copy = io::load_model(dir / "copy.onnx");
      ASSERT_TRUE(copy.is_ok()) << copy.status().to_string();
    } else {
      EXPECT_EQ(checked.exit_code, 5) << location << ": " << checked.err;
      EXPECT_NE(checked.err.find("then_branch"), std::string::npos) << checked.err;
      EXPECT_EQ(r.exit_code, 5) << location << ": " << r.err;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
