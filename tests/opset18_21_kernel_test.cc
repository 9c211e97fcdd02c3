// Kernels of ops new in opsets 18..21 (docs/opset18-21.md): Mish-18, Gelu-20, GroupNormalization-18
// (scale/bias per group) and -21 (per channel), and LpPool (2..17, and 18 with ceil_mode/dilations),
// against their formulas in double, and in onnxruntime.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/io/tensor_file.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {
namespace fs = std::filesystem;

Tensor spread_tensor(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6 * (1 + std::fabs(want[i]))) << what << " element " << i;
}

TEST(Opset18To21Kernels, MishAndGeluFollowTheirFormulas) {
  const Tensor x = spread_tensor({64}, 1);
  const float* xv = x.data<float>();
  std::vector<double> mish, gelu, gelu_tanh;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = xv[i];
    mish.push_back(v * std::tanh(std::log1p(std::exp(v))));
    gelu.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    gelu_tanh.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  auto r = run_node({"Mish", "", 18, {}, {x}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), mish, "Mish");
  NodeCase g{"Gelu", "", 20, {}, {x}};
  r = run_node(g);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), gelu, "Gelu");
  g.attrs = [](io::NodeBuilder& n) { n.attr("approximate", "tanh"); };
  r = run_node(g);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), gelu_tanh, "Gelu tanh");
  g.attrs = [](io::NodeBuilder& n) { n.attr("approximate", "erf"); };
  expect_error(run_node(g), Code::kInvalidModel, "approximate 'erf'");
  // Before their opsets they do not exist.
  expect_error(run_node({"Mish", "", 17, {}, {x}}), Code::kUnsupported, "Mish");
  expect_error(run_node({"Gelu", "", 19, {}, {x}}), Code::kUnsupported, "Gelu");
}

TEST(Opset18To21Kernels, LpPoolBeforeAndFrom18) {
  // x[1, 1, 5]: windows of 2 with stride 2; p = 3; from 18 ceil_mode adds the last, one-element window,
  // and dilations 2 read every other element.
  const Tensor x = f32({1, 1, 5}, {1, -2, 3, -4, 5});
  auto cube_root_sum = [](std::vector<double> v) {
    double s = 0;
    for (double e : v) s += std::pow(std::fabs(e), 3);
    return std::cbrt(s);
  };
  NodeCase c{"LpPool", "", 11, {}, {x}};
  c.attrs = [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}).attr("p", 3); };
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), {cube_root_sum({1, -2}), cube_root_sum({3, -4})}, "LpPool-11");
  c.opset = 18;
  c.attrs = [](io::NodeBuilder& n) {
    n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}).attr("p", 3).attr("ceil_mode", 1);
  };
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), {cube_root_sum({1, -2}), cube_root_sum({3, -4}), cube_root_sum({5})}, "LpPool-18 ceil");
  c.attrs = [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}).attr("dilations", std::vector<int64_t>{2}); };
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) want.push_back(std::sqrt(std::pow(x.data<float>()[i], 2) + std::pow(x.data<float>()[i + 2], 2)));
  expect_near_all(values_f32(r.value()[0]), want, "LpPool-18 dilations");
  c.opset = 17;
  expect_error(run_node(c), Code::kInvalidModel, "exist from LpPool-18 on");
}

TEST(Opset18To21Kernels, BitwiseOps) {
  const Tensor a = make<int8_t>(DType::kInt8, {4}, {0x0f, -1, 0x55, -128}), b = make<int8_t>(DType::kInt8, {}, {0x33});
  auto values = [](const Tensor& t) { return std::vector<int8_t>(t.data<int8_t>(), t.data<int8_t>() + t.numel()); };
  auto r = run_node({"BitwiseAnd", "", 18, {}, {a, b}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values(r.value()[0]), (std::vector<int8_t>{0x03, 0x33, 0x11, 0x00}));
  r = run_node({"BitwiseOr", "", 21, {}, {a, b}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values(r.value()[0]), (std::vector<int8_t>{0x3f, -1, 0x77, -128 | 0x33}));
  r = run_node({"BitwiseXor", "", 18, {}, {a, b}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values(r.value()[0]), (std::vector<int8_t>{0x3c, static_cast<int8_t>(0xcc), 0x66, static_cast<int8_t>(0xb3)}));
  r = run_node({"BitwiseNot", "", 18, {}, {make<uint16_t>(DType::kUInt16, {2}, {0, 0x00ff})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].data<uint16_t>()[0], 0xffff);
  EXPECT_EQ(r.value()[0].data<uint16_t>()[1], 0xff00);
  // No library schema for ops new in 18..21: the kernel rejects the type.
  expect_error(run_node({"BitwiseAnd", "", 18, {}, {f32({1}, {1}), f32({1}, {1})}}), Code::kUnsupported, "does not support type float");
  expect_error(run_node({"BitwiseAnd", "", 17, {}, {a, b}}), Code::kUnsupported, "BitwiseAnd");
}

// Pad per version range: attributes (2..10), inputs (11..17), the axes input (18), wrap (19 on).
TEST(Opset18To21Kernels, PadEveryVersionRange) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeCase c{"Pad", "", 10, {}, {x}};
  c.attrs = [](io::NodeBuilder& n) { n.attr("pads", std::vector<int64_t>{0, 1, 0, 0}).attr("value", 9.0f); };
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{9, 1, 2, 3, 9, 4, 5, 6}));
  // From 11 the pads are input #1; an axes input #3 is read from 18 only (before, every axis is padded).
  c.attrs = nullptr;
  c.inputs = {x, i64({2}, {1, 0}), f32s(7), i64({1}, {1})};
  c.opset = 17;
  expect_error(run_node(c), Code::kInvalidModel, "pads has 2 entries, expected 4");
  for (int opset : {18, 19, 21}) {
    c.opset = opset;
    r = run_node(c);
    ASSERT_TRUE(r.is_ok()) << opset << ": " << r.status().to_string();
    EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{7, 1, 2, 3, 7, 4, 5, 6})) << opset;
  }
  // wrap from 19: the padded column is the last one of the row.
  c.inputs = {x, i64({2}, {1, 0}), Tensor(), i64({1}, {-1})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("mode", "wrap"); };
  c.opset = 18;
  expect_error(run_node(c), Code::kInvalidModel, "mode 'wrap' is not constant, reflect, edge");
  c.opset = 19;
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{3, 1, 2, 3, 6, 4, 5, 6}));
}

// y = scale * (x - mean) / sqrt(var + eps) + bias per (n, group), in double.
std::vector<double> group_norm_reference(const Tensor& x, int64_t groups, const std::vector<float>& scale,
                                         const std::vector<float>& bias, bool per_channel, double eps) {
  const int64_t n = x.dim(0), c = x.dim(1), spatial = x.numel() / (n * c), block = c / groups * spatial;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t b = 0; b < n * groups; ++b) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < block; ++j) mean += x.data<float>()[b * block + j];
    mean /= static_cast<double>(block);
    for (int64_t j = 0; j < block; ++j) var += std::pow(x.data<float>()[b * block + j] - mean, 2);
    var /= static_cast<double>(block);
    for (int64_t j = 0; j < block; ++j) {
      const auto k = static_cast<size_t>(per_channel ? (b % groups) * (c / groups) + j / spatial : b % groups);
      y[static_cast<size_t>(b * block + j)] = scale[k] * (x.data<float>()[b * block + j] - mean) / std::sqrt(var + eps) + bias[k];
    }
  }
  return y;
}

TEST(Opset18To21Kernels, GroupNormalizationPerGroupAt18AndPerChannelAt21) {
  const Tensor x = spread_tensor({2, 6, 5}, 2);
  const std::vector<float> group_scale = {0.5f, -1.5f, 2.0f}, group_bias = {1, 0, -1};
  const std::vector<float> channel_scale = {0.5f, 1, -1.5f, 2, 2.5f, -3}, channel_bias = {1, 2, 3, 4, 5, 6};
  auto attrs = [](io::NodeBuilder& n) { n.attr("num_groups", int64_t{3}).attr("epsilon", 1e-2f); };
  for (int opset : {18, 20}) {
    auto r = run_node({"GroupNormalization", "", opset, {}, {x, f32({3}, group_scale), f32({3}, group_bias)}, attrs});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_near_all(values_f32(r.value()[0]), group_norm_reference(x, 3, group_scale, group_bias, false, 1e-2), "18");
    expect_error(run_node({"GroupNormalization", "", opset, {}, {x, f32({6}, channel_scale), f32({6}, channel_bias)}, attrs}),
                 Code::kInvalidModel, "one value per group");
  }
  auto r = run_node({"GroupNormalization", "", 21, {}, {x, f32({6}, channel_scale), f32({6}, channel_bias)}, attrs});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near_all(values_f32(r.value()[0]), group_norm_reference(x, 3, channel_scale, channel_bias, true, 1e-2), "21");
  // Errors: channels that do not split into the groups, a missing num_groups, stash_type other than 1.
  auto four = [](io::NodeBuilder& n) { n.attr("num_groups", int64_t{4}); };
  expect_error(run_node({"GroupNormalization", "", 21, {}, {x, f32({6}, channel_scale), f32({6}, channel_bias)}, four}),
               Code::kInvalidModel, "6 channels do not split into num_groups 4");
  expect_error(run_node({"GroupNormalization", "", 21, {}, {x, f32({6}, channel_scale), f32({6}, channel_bias)}}),
               Code::kInvalidModel, "'num_groups' is required");
  auto stash = [](io::NodeBuilder& n) { n.attr("num_groups", int64_t{3}).attr("stash_type", int64_t{11}); };
  expect_error(run_node({"GroupNormalization", "", 21, {}, {x, f32({6}, channel_scale), f32({6}, channel_bias)}, stash}),
               Code::kUnsupported, "stash_type 11");
}

// onnxruntime runs the same single-node models and agrees within float tolerance (GroupNormalization-18
// also after upgrade-opset to 21, which spreads its parameters per channel).
TEST(Opset18To21Kernels, OnnxruntimeAgrees) {
  if (!onnxruntime_available())
    GTEST_SKIP() << "onnxruntime-node is not installed (bash scripts/install-ort.sh)";
  const fs::path dir = fs::temp_directory_path() / ("qonnx_opset21_kernels_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  struct Case {
    std::string name;
    io::ModelBuilder model;
    bool upgrade;
  };
  std::vector<Case> cases;
  auto single = [](int64_t opset, const std::string& op, const std::function<void(io::NodeBuilder&)>& attrs) {
    io::ModelBuilder b(opset);
    b.input("x", DType::kFloat, {2, 6, 5}).output("y", DType::kFloat);
    if (op == "GroupNormalization") {
      const int64_t params = opset >= 21 ? 6 : 3;
      b.initializer("scale", spread_tensor({params}, 3)).initializer("bias", spread_tensor({params}, 4));
      io::NodeBuilder n = b.node(op, {"x", "scale", "bias"}, {"y"});
      attrs(n);
    } else {
      io::NodeBuilder n = b.node(op, {"x"}, {"y"});
      attrs(n);
    }
    return b;
  };
  auto none = [](io::NodeBuilder&) {};
  auto groups = [](io::NodeBuilder& n) { n.attr("num_groups", int64_t{3}).attr("epsilon", 1e-3f); };
  cases.push_back({"mish18", single(18, "Mish", none), false});
  {
    io::ModelBuilder b(18);
    b.input("x", DType::kFloat, {2, 6, 5}).output("y", DType::kFloat);
    b.initializer("mask", make<int32_t>(DType::kInt32, {5}, {0x0f0f, -1, 0x7ff0, 3, -256}));
    // float -> int32 bits through the four ops -> float: every bitwise op in one exact model.
    b.node("Cast", {"x"}, {"xi"}).attr("to", static_cast<int64_t>(DType::kInt32));
    b.node("BitwiseAnd", {"xi", "mask"}, {"and"});
    b.node("BitwiseOr", {"and", "xi"}, {"or"});
    b.node("BitwiseXor", {"or", "mask"}, {"xor"});
    b.node("BitwiseNot", {"xor"}, {"not"});
    b.node("Cast", {"not"}, {"y"}).attr("to", static_cast<int64_t>(DType::kFloat));
    cases.push_back({"bitwise18", std::move(b), false});
  }
  cases.push_back({"gelu20", single(20, "Gelu", none), false});
  cases.push_back({"gelu20_tanh", single(20, "Gelu", [](io::NodeBuilder& n) { n.attr("approximate", "tanh"); }), false});
  cases.push_back({"group_norm18", single(18, "GroupNormalization", groups), false});
  cases.push_back({"group_norm18_upgraded_to_21", single(18, "GroupNormalization", groups), true});
  cases.push_back({"group_norm21", single(21, "GroupNormalization", groups), false});
  cases.push_back({"lp_pool11", single(11, "LpPool", [](io::NodeBuilder& n) { n.attr("kernel_shape", std::vector<int64_t>{2}).attr("p", 3); }), false});
  cases.push_back({"lp_pool18", single(18, "LpPool", [](io::NodeBuilder& n) {
                     n.attr("kernel_shape", std::vector<int64_t>{2}).attr("strides", std::vector<int64_t>{2}).attr("ceil_mode", 1)
                         .attr("dilations", std::vector<int64_t>{2}).attr("pads", std::vector<int64_t>{1, 0});
                   }), false});
  cases.push_back({"lp_pool11_upgraded_to_21", single(11, "LpPool", [](io::NodeBuilder& n) {
                     n.attr("kernel_shape", std::vector<int64_t>{3}).attr("strides", std::vector<int64_t>{2});
                   }), true});
  cases.push_back({"average_pool19_dilations", single(19, "AveragePool", [](io::NodeBuilder& n) {
                     n.attr("kernel_shape", std::vector<int64_t>{2}).attr("dilations", std::vector<int64_t>{2}).attr("ceil_mode", 1)
                         .attr("strides", std::vector<int64_t>{2});
                   }), false});
  const Tensor x = spread_tensor({2, 6, 5}, 5);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path d = dir / c.name;
    fs::create_directories(d / "inputs");
    fs::create_directories(d / "expected");
    ir::Model model = c.model.build().value();
    auto want = exec::Executor::create(model).value().run({{"x", x}});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    if (c.upgrade) {
      ASSERT_TRUE(run_passes(model, "upgrade-opset{version=21}").is_ok());
    }
    ASSERT_TRUE(io::write_tensor_pb(d / "inputs/input_0.pb", "x", x).is_ok());
    ASSERT_TRUE(io::write_tensor_pb(d / "expected/output_0.pb", "y", want->outputs[0]).is_ok());
    ASSERT_TRUE(io::save_model(model, (d / "model.onnx").string()).is_ok());
    EXPECT_EQ(onnxruntime_disagreement(d / "model.onnx", d / "inputs", d / "expected", 1e-5, 1e-4), "");
  }
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace qonnx::test
