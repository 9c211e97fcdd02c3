// The executor enforces ONNX's type constraints as onnxruntime does: an element type outside the
// schema's allowed set, or two types bound to one type parameter, is an invalid model (exit 5) naming
// the node, the input, the types and the constraint. So `convert --check` cannot pass such a model.
#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/schemas/schemas.h"
#include "support/cli.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

Tensor f64s(double v) { return make<double>(DType::kDouble, {}, {v}); }

// x (float) -> Div(x, d) -> y, d a float64 initializer.
io::ModelBuilder mixed_div(int64_t opset = 13) {
  io::ModelBuilder b(opset);
  b.input("x", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.initializer("d", f64s(2.0));
  b.node("Div", {"x", "d"}, {"y"}).name("half");
  return b;
}

TEST(TypeConstraints, MixedFloatAndDoubleIntoDivIsAnError) {
  auto m = mixed_div().build().value();
  auto ex = exec::Executor::create(m);
  ASSERT_TRUE(ex.is_ok());
  auto r = ex->run({{"x", f32({2}, {1, 2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel);
  const std::string msg = r.status().to_string();
  for (const char* part : {"node 'half'", "input #1 'd' (B) is double", "input #0 'x' (A) is float", "type parameter T"})
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
}

TEST(TypeConstraints, EveryBindingAndAllowedSetIsChecked) {
  NodeCase relu{"Relu", "", 13, {}, {i64({2}, {1, -1})}};
  expect_error(run_node(relu), Code::kInvalidModel, "is int64, which Relu type parameter T (v");
  relu.opset = 14;  // Relu accepts integers from opset 14
  ASSERT_TRUE(run_node(relu).is_ok());
  // Concrete (non-parameter) types: Reshape's shape must be int64.
  NodeCase reshape{"Reshape", "", 13, {}, {f32({2}, {1, 2}), make<int32_t>(DType::kInt32, {1}, {2})}};
  expect_error(run_node(reshape), Code::kInvalidModel, "input #1 'in1' (shape) is int32");
  // Variadic homogeneous inputs bind one type: Concat(float, double).
  NodeCase concat{"Concat", "", 13, {}, {f32({1}, {1}), make<double>(DType::kDouble, {1}, {2})}};
  concat.attrs = [](io::NodeBuilder& n) { n.attr("axis", 0); };
  expect_error(run_node(concat), Code::kInvalidModel, "must be one type");
  // Outputs bind with the inputs: Cast's output follows its `to`, which T2 allows.
  NodeCase cast{"Cast", "", 13, {}, {f32({1}, {1.5f})}};
  cast.attrs = [](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(DType::kDouble)); };
  ASSERT_TRUE(run_node(cast).is_ok());
}

// A step's check remembers the dtypes that last passed: other dtypes after them are still checked, inputs
// and outputs alike.
TEST(TypeConstraints, OtherTypesAfterPassingOnesAreStillChecked) {
  io::ModelBuilder b(13);
  b.input("a", DType::kFloat, {2}).input("b", DType::kFloat, {2}).output("y", DType::kFloat, {2});
  b.node("Div", {"a", "b"}, {"y"}).name("div");
  const ir::Model m = b.build().value();
  const exec::TypeCheck check = schemas::type_check_for(*m.graph().nodes().front(), 13);
  ASSERT_TRUE(check);
  const Tensor f = f32({2}, {1, 2}), d = f64s(2.0);
  const std::vector<Tensor> float_out = {f}, double_out = {d};
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(check({&f, &f}, nullptr).is_ok());
    EXPECT_FALSE(check({&f, &d}, nullptr).is_ok());
    EXPECT_TRUE(check({&d, &d}, nullptr).is_ok());
    EXPECT_TRUE(check({&f, &f}, &float_out).is_ok());
    EXPECT_FALSE(check({&f, &f}, &double_out).is_ok());
    EXPECT_FALSE(check({&d, &f}, &float_out).is_ok());
  }
}

// QONNX quantizers take any numeric type per input (real exports mix them), and stay checked.
TEST(TypeConstraints, QonnxParametersMayMixTypes) {
  NodeCase q{"Quant", "qonnx.custom_op.general", 13, {{"qonnx.custom_op.general", 1}},
             {f32({2}, {0.3f, -0.7f}), f64s(0.25), make<int64_t>(DType::kInt64, {}, {0}), make<int32_t>(DType::kInt32, {}, {4})}};
  auto r = run_node(q);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dtype(), DType::kFloat);
  q.inputs[1] = make<bool>(DType::kBool, {}, {true});
  expect_error(run_node(q), Code::kInvalidModel, "input #1 'in1' (scale) is bool");
}

// Constant folding evaluates with the same rules, so a pass cannot hide a type error either.
TEST(TypeConstraints, FoldingAMixedNodeFailsThePass) {
  io::ModelBuilder b(13);
  b.input("x", DType::kFloat, {1}).output("y", DType::kFloat, {1});
  b.initializer("a", f32s(1)).initializer("d", f64s(2));
  b.node("Div", {"a", "d"}, {"c"});
  b.node("Add", {"x", "c"}, {"y"});
  auto m = b.build().value();
  auto r = run_passes(m, "fold-constants");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidModel);
  EXPECT_NE(r.status().to_string().find("[fold-constants]"), std::string::npos) << r.status().to_string();
}

TEST(TypeConstraints, CliExecAndConvertCheckExitFive) {
  const fs::path dir = fs::temp_directory_path() / ("qonnx_type_constraints_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string in = (dir / "mixed.onnx").string(), out = (dir / "out.onnx").string();
  ASSERT_TRUE(io::save_model(mixed_div().build().value(), in).is_ok());
  auto e = run_cli("exec " + in + " --random-inputs");
  EXPECT_EQ(e.exit_code, 5) << e.err;
  EXPECT_NE(e.err.find("must be one type"), std::string::npos) << e.err;
  auto c = run_cli("convert " + in + " --passes cleanup -o " + out + " --check 1");
  EXPECT_EQ(c.exit_code, 5) << c.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
