// The Graph mutation API keeps producer and use links consistent (the verifier accepts the result),
// and the verifier rejects each malformed graph it knows.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_text.h"
#include "qonnx/pass/pass.h"
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

}  // namespace
}  // namespace qonnx::test
