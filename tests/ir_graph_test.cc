// The Graph mutation API keeps producer and use links consistent (the verifier accepts the result),
// and the verifier rejects each malformed graph it knows.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_text.h"
#include "qonnx/pass/pass.h"
#include "qonnx/pass/rewriter.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

// x -> Relu(a) -> Neg(b) -> y, with an annotation on a.
ir::Model chain() {
  auto m = io::load_model_from_text(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
<float[2] w = {1, 2}>
{
  a = Relu (x)
  b = Add (a, w)
  y = Neg (b)
}
)", ".");
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  m.value().graph().set_finn_datatype("a", "UINT4");
  return std::move(m).value();
}

ir::Node* producer(ir::Graph& g, const std::string& value) { return g.find_value(value)->producer(); }

TEST(GraphMutation, InsertAndRemoveKeepLinks) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  ir::Node* add = producer(g, "b");
  auto sig = g.insert_node(add, "sig", "Sigmoid", "", {g.find_value("a")}, {"a_sig"});
  ASSERT_TRUE(sig.is_ok()) << sig.status().to_string();
  g.set_node_input(add, 0, g.find_value("a_sig"));
  EXPECT_EQ(g.find_value("a")->uses().size(), 1u);
  EXPECT_EQ(g.find_value("a_sig")->uses().size(), 1u);
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
  // Outputs of an inserted node must be new.
  EXPECT_FALSE(g.insert_node(add, "dup", "Relu", "", {g.find_value("x")}, {"b"}).is_ok());
  // Bypass and remove the Sigmoid again.
  g.replace_all_uses(g.find_value("a_sig"), g.find_value("a"));
  g.remove_node(sig.value());
  EXPECT_EQ(g.find_value("a")->uses().size(), 1u);
  EXPECT_EQ(g.node_count(), 3u);
  EXPECT_TRUE(pass::verify_graph(m).is_ok());
}

TEST(GraphMutation, ReplaceAllUsesReachesGraphOutputs) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  ir::Node* neg = producer(g, "y");
  auto abs = g.insert_node(nullptr, "abs", "Abs", "", {g.find_value("b")}, {"y2"});
  ASSERT_TRUE(abs.is_ok());
  g.replace_all_uses(g.find_value("y"), g.find_value("y2"));
  EXPECT_EQ(g.outputs()[0]->name(), "y2");
  g.remove_node(neg);
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
}

TEST(GraphMutation, DeclaredInputAndOutputTypesCanBeEdited) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  ASSERT_EQ(g.type_of(g.inputs()[0])->dims, (Dims{2}));
  auto* in_shape = g.mutable_input_info(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  in_shape->mutable_dim(0)->set_dim_value(5);
  in_shape->add_dim()->set_dim_value(3);
  g.mutable_output_info(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(7);
  // type_of reads the edited declarations (its index points at the graph's own protos).
  EXPECT_EQ(g.type_of(g.inputs()[0])->dims, (Dims{5, 3}));
  EXPECT_EQ(g.type_of(g.outputs()[0])->dims, (Dims{7}));
  EXPECT_EQ(g.input_info(0)->type().tensor_type().shape().dim_size(), 2);
}

TEST(GraphMutation, RenameUpdatesOutputsInitializersAndAnnotations) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  ASSERT_TRUE(g.rename_value(g.find_value("a"), "relu_out").is_ok());
  ASSERT_TRUE(g.rename_value(g.find_value("w"), "weight").is_ok());
  ASSERT_TRUE(g.rename_value(g.find_value("y"), "out").is_ok());
  EXPECT_EQ(g.finn_datatype("relu_out"), "UINT4");
  EXPECT_EQ(g.finn_datatype("a"), "");
  EXPECT_EQ(g.outputs()[0]->name(), "out");
  EXPECT_EQ(g.initializer_tensor(g.find_value("weight")).value().numel(), 2);
  EXPECT_FALSE(g.rename_value(g.find_value("b"), "x").is_ok()) << "a taken name is refused";
  std::string text = io::to_onnx_text(m, 8);
  EXPECT_NE(text.find("b = Add(relu_out, weight)"), std::string::npos) << text;
  EXPECT_NE(text.find("out = Neg(b)"), std::string::npos) << text;
  EXPECT_TRUE(pass::verify_graph(m).is_ok());
}

TEST(GraphMutation, InitializersComeAndGo) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  EXPECT_FALSE(g.set_initializer(g.find_value("a"), f32({2}, {0, 0})).is_ok()) << "a produced value cannot become one";
  ASSERT_TRUE(g.set_initializer(g.find_value("w"), f32({2}, {5, 6})).is_ok());
  EXPECT_EQ(values_f32(g.initializer_tensor(g.find_value("w")).value()), (std::vector<float>{5, 6}));
  auto fresh = g.add_initializer_tensor(g.unique_name("w"), f32s(3));
  ASSERT_TRUE(fresh.is_ok());
  EXPECT_EQ(fresh.value()->name(), "w_1");
  g.remove_initializers({fresh.value()});
  EXPECT_FALSE(fresh.value()->is_initializer());
  EXPECT_TRUE(pass::verify_graph(m).is_ok());
}

// Each malformed graph the verifier knows, reached through the mutation API.
TEST(Verifier, RejectsUndefinedInput) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  g.set_node_input(producer(g, "b"), 1, g.get_or_create_value("ghost"));
  Status st = pass::verify_graph(m);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("input #1 'ghost' is not defined"), std::string::npos) << st.to_string();
}

TEST(Verifier, RejectsUnproducedGraphOutput) {
  ir::Model m = chain();
  m.graph().remove_node(producer(m.graph(), "y"));
  Status st = pass::verify_graph(m);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("graph output 'y' is never produced"), std::string::npos) << st.to_string();
}

TEST(Verifier, RejectsCycle) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  g.set_node_input(producer(g, "a"), 0, g.find_value("b"));  // Relu reads Add, which reads Relu
  Status st = pass::verify_graph(m);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("cycle"), std::string::npos) << st.to_string();
}

TEST(Verifier, RejectsValueProducedTwice) {
  ir::Model m = chain();
  EXPECT_FALSE(m.graph().add_node("again", "Relu", "", {"x"}, {"a"}).is_ok()) << "the API refuses a second producer";
  auto loaded = io::load_model_from_text(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
{
  y = Relu (x)
  y = Neg (x)
}
)", ".");
  ASSERT_FALSE(loaded.is_ok());
  EXPECT_EQ(loaded.status().code(), Code::kInvalidModel);
  EXPECT_NE(loaded.status().to_string().find("'y' is already defined"), std::string::npos) << loaded.status().to_string();
}

TEST(ModelText, SyntaxErrorIsAnInvalidModel) {
  auto r = io::load_model_from_text("<ir_version: 8> g (float[2] x => (float[2] y) {}", ".");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel);
  EXPECT_NE(r.status().to_string().find("ONNX text does not parse"), std::string::npos) << r.status().to_string();
}

// ---- Typed attributes (ir::Node::attr<T>): no INT <-> FLOAT coercion, errors name the attribute ----

ir::Node* relu_of(ir::Model& m) { return producer(m.graph(), "a"); }

TEST(NodeAttributes, TypedReadsAndFallbacks) {
  ir::Model m = chain();
  ir::Node* n = relu_of(m);
  n->set_attr("i", 7);
  n->set_attr("f", 2.5);
  n->set_attr("s", "text");
  n->set_attr("flag", int64_t{2});
  n->set_attr("is", std::vector<int64_t>{1, -2});
  n->set_attr("fs", std::vector<float>{0.5f});
  n->set_attr("ss", std::vector<std::string>{"a", "b"});
  EXPECT_EQ(n->attr<int64_t>("i").value(), 7);
  EXPECT_EQ(n->attr<float>("f").value(), 2.5f);
  EXPECT_EQ(n->attr<std::string>("s").value(), "text");
  EXPECT_TRUE(n->attr<bool>("flag").value());  // an INT flag: non-zero is true
  EXPECT_EQ(n->attr<std::vector<int64_t>>("is").value(), std::vector<int64_t>({1, -2}));
  EXPECT_EQ(n->attr<std::vector<float>>("fs").value(), std::vector<float>({0.5f}));
  EXPECT_EQ(n->attr<std::vector<std::string>>("ss").value(), std::vector<std::string>({"a", "b"}));
  // Absent: the fallback, or an error naming it when required.
  EXPECT_EQ(n->attr<int64_t>("nope", -3).value(), -3);
  EXPECT_EQ(n->attr<std::vector<float>>("nope", {}).value(), std::vector<float>());
  auto missing = n->attr<int64_t>("nope");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), Code::kInvalidModel);
  EXPECT_EQ(missing.status().message(), "missing attribute 'nope'");
  // Present: the fallback is not used.
  EXPECT_EQ(n->attr<int64_t>("i", 0).value(), 7);
  // A setter replaces in place and keeps the attribute's position.
  n->set_attr("i", 0.25f);
  EXPECT_EQ(n->attr_names(), std::vector<std::string>({"i", "f", "s", "flag", "is", "fs", "ss"}));
  EXPECT_EQ(n->attr<float>("i").value(), 0.25f);
}

TEST(NodeAttributes, WrongTypeIsAnErrorNamingTheAttribute) {
  ir::Model m = chain();
  ir::Node* n = relu_of(m);
  n->set_attr("axis", 1.0f);   // FLOAT where an INT belongs: no silent cast any more
  n->set_attr("alpha", 2);     // INT where a FLOAT belongs
  n->set_attr("mode", std::vector<int64_t>{1});
  auto axis = n->attr<int64_t>("axis", 0);
  ASSERT_FALSE(axis.is_ok());
  EXPECT_EQ(axis.status().code(), Code::kInvalidModel);
  EXPECT_EQ(axis.status().message(), "attribute 'axis' must be INT, got FLOAT");
  EXPECT_FALSE(n->attr<bool>("axis", false).is_ok());
  auto alpha = n->attr<float>("alpha", 1.0f);
  ASSERT_FALSE(alpha.is_ok());
  EXPECT_EQ(alpha.status().message(), "attribute 'alpha' must be FLOAT, got INT");
  auto mode = n->attr<std::string>("mode");
  ASSERT_FALSE(mode.is_ok());
  EXPECT_EQ(mode.status().message(), "attribute 'mode' must be STRING, got INTS");
  EXPECT_FALSE(n->attr<std::vector<float>>("mode", {}).is_ok());
}

TEST(NodeAttributes, UntypedAttributeIsReadAsTheWantedType) {
  ir::Model m = chain();
  ir::Node* n = relu_of(m);
  n->set_attr("k", int64_t{5});
  n->set_attr("eps", 0.125f);
  for (auto& a : *n->mutable_rest().mutable_attribute()) a.set_type(onnx::AttributeProto::UNDEFINED);
  EXPECT_EQ(n->attr_type("k"), 0);
  EXPECT_EQ(n->attr<int64_t>("k").value(), 5);
  EXPECT_EQ(n->attr<float>("eps").value(), 0.125f);
}

// A pass that met a FLOAT where an INT belongs used to cast it silently; now it stops with the attribute named.
TEST(NodeAttributes, PassReportsAMistypedAttribute) {
  auto m = io::load_model_from_text(R"(
<ir_version: 8, opset_import: ["" : 13, "qonnx.custom_op.general" : 1]>
g (float[2] x) => (float[2] y)
<float s = {1}, float z = {0}, float bits = {4}>
{
  y = qonnx.custom_op.general.Quant <signed = 1, narrow = 0, rounding_mode = "ROUND"> (x, s, z, bits)
}
)", ".");
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  // (The loader rejects this spelling in a QONNX op; a program or a pass can still write it.)
  m.value().graph().find_value("y")->producer()->set_attr("signed", 1.0f);
  auto r = run_passes(m.value(), "infer-datatypes");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel);
  EXPECT_NE(r.status().to_string().find("attribute 'signed' must be INT, got FLOAT"), std::string::npos)
      << r.status().to_string();
  EXPECT_NE(r.status().to_string().find("Quant"), std::string::npos) << r.status().to_string();
  // With the INT it belongs, the same model is typed.
  m.value().graph().find_value("y")->producer()->set_attr("signed", 1);
  ASSERT_TRUE(run_passes(m.value(), "infer-datatypes").is_ok());
  EXPECT_EQ(m.value().graph().finn_datatype("y"), "INT4");
}

// ---- Shape helpers on the graph ----

TEST(GraphShapes, DimsAndRankFromInitializersAndDeclaredTypes) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  EXPECT_EQ(g.dims_of(g.find_value("w")), Dims({2}));  // initializer: its stored dims
  EXPECT_EQ(g.dims_of(g.find_value("x")), Dims({2}));  // declared input type
  EXPECT_EQ(g.rank_of(g.find_value("x")), 1);
  EXPECT_FALSE(g.dims_of(g.find_value("a")).has_value());  // no value_info
  EXPECT_EQ(g.rank_of(g.find_value("a")), -1);
  EXPECT_EQ(g.rank_of(nullptr), -1);
  g.add_value_info("a", DType::kFloat, {-1, 3});
  EXPECT_EQ(g.dims_of(g.find_value("a")), Dims({-1, 3}));
  EXPECT_EQ(g.type_of(g.find_value("a"))->dtype, DType::kFloat);
}

// ---- Rewriter ----

std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) names.push_back(n->name() + ":" + n->op_type());
  return names;
}

TEST(Rewriter, ReplacesOneNodeInPlace) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  ir::Node* add = producer(g, "b");
  g.set_node_name(add, "add");
  pass::Rewriter r(g, add);
  auto half = r.constant("half", f32s(0.5f));
  ASSERT_TRUE(half.is_ok());
  auto scaled = r.op("scale", "Mul", {g.find_value("a"), half.value()});
  ASSERT_TRUE(scaled.is_ok());
  EXPECT_NE(producer(g, "b"), nullptr);  // the replaced node is still there until finish
  ASSERT_TRUE(r.finish("sum", "Add", {scaled.value(), g.find_value("w")}).is_ok());
  EXPECT_EQ(node_names(g), std::vector<std::string>({":Relu", "add_scale:Mul", "add_sum:Add", ":Neg"}));
  EXPECT_EQ(producer(g, "b")->name(), "add_sum");  // the final node writes the matched output
  EXPECT_TRUE(g.find_value("add_half")->is_initializer());
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
  // finish_with on a graph output keeps its name through an Identity.
  pass::Rewriter out(g, producer(g, "y"));
  ASSERT_TRUE(out.finish_with(g.find_value("b")).is_ok());
  EXPECT_EQ(producer(g, "y")->op_type(), "Identity");
  EXPECT_TRUE(pass::verify_graph(m).is_ok());
}

TEST(Rewriter, ReplacesAMatchedChain) {
  ir::Model m = chain();
  ir::Graph& g = m.graph();
  pass::Rewriter r(g, {producer(g, "b"), producer(g, "y")}, "fused");
  EXPECT_EQ(g.node_count(), 1u);  // the matched chain is gone at once
  auto sq = r.op("square", "Mul", {g.find_value("a"), g.find_value("a")});
  ASSERT_TRUE(sq.is_ok());
  ASSERT_TRUE(r.finish("out", "Sub", {sq.value(), g.find_value("w")}).is_ok());
  EXPECT_EQ(node_names(g), std::vector<std::string>({":Relu", "fused_square:Mul", "fused_out:Sub"}));
  EXPECT_EQ(g.outputs()[0]->name(), "y");
  EXPECT_EQ(g.outputs()[0]->producer()->name(), "fused_out");
  EXPECT_TRUE(pass::verify_graph(m).is_ok()) << pass::verify_graph(m).to_string();
}

}  // namespace
}  // namespace qonnx::test
