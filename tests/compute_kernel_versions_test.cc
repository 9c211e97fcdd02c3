// The version ranges of the compute kernels (Conv, pooling, normalization, Gemm, MatMul families):
// each ONNX version behaves per its own spec, ops have no kernel below their first version, and an
// attribute error comes from plan time naming the node and the attribute.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "qonnx/exec/executor.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kChannelsLast = "qonnx.custom_op.channels_last";

Attrs window(std::vector<int64_t> kernel, std::vector<int64_t> strides, Attrs extra = nullptr) {
  return [=](io::NodeBuilder& n) {
    n.attr("kernel_shape", kernel).attr("strides", strides);
    if (extra) extra(n);
  };
}

Attrs int_attr(const std::string& name, int64_t v) {
  return [=](io::NodeBuilder& n) { n.attr(name, v); };
}

Attrs ints_attr(const std::string& name, std::vector<int64_t> v) {
  return [=](io::NodeBuilder& n) { n.attr(name, v); };
}

std::vector<float> ok_values(const Result<std::vector<Tensor>>& r, size_t output = 0) {
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? values_f32(r.value()[output]) : std::vector<float>{};
}

TEST(ComputeKernelVersions, MaxPool1HasNoStorageOrderIndicesCeilModeOrDilations) {
  const Tensor x = f32({1, 1, 4}, {1, 3, 2, 5});
  EXPECT_EQ(ok_values(run_op("MaxPool", {x}, window({2}, {2}), 7)), (std::vector<float>{3, 5}));
  expect_error(run_op("MaxPool", {x}, window({2}, {2}, int_attr("storage_order", 0)), 7), Code::kInvalidModel,
               "attribute 'storage_order': not an attribute of MaxPool-7");
  expect_error(run_op("MaxPool", {x}, window({2}, {2}), 7, 2), Code::kInvalidModel, "Indices exists from MaxPool-8 on");
  expect_error(run_op("MaxPool", {x}, window({2}, {2}, int_attr("ceil_mode", 0)), 1), Code::kInvalidModel,
               "exist from MaxPool-10 on");
  expect_error(run_op("MaxPool", {x}, window({2}, {2}, ints_attr("dilations", {1})), 7), Code::kInvalidModel,
               "attribute 'dilations'");
}

TEST(ComputeKernelVersions, MaxPool8HasIndicesAndStorageOrderButNoCeilMode) {
  const Tensor x = f32({1, 1, 2, 3}, {1, 6, 2, 4, 3, 7});
  auto r = run_op("MaxPool", {x}, window({2, 2}, {1, 1}, int_attr("storage_order", 1)), 8, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{6, 7}));
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{2, 5}));  // column-major spatial index
  const Tensor x5 = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  expect_error(run_op("MaxPool", {x5}, window({2}, {2}, int_attr("ceil_mode", 1)), 9), Code::kInvalidModel,
               "not an attribute of MaxPool-9");
  // From 10 on ceil_mode adds the partial last window.
  EXPECT_EQ(ok_values(run_op("MaxPool", {x5}, window({2}, {2}, int_attr("ceil_mode", 1)), 10)),
            (std::vector<float>{2, 4, 5}));
  EXPECT_EQ(ok_values(run_op("MaxPool", {x5}, window({2}, {1}, ints_attr("dilations", {2})), 12)),
            (std::vector<float>{3, 4, 5}));
}

TEST(ComputeKernelVersions, AveragePoolAttributesArriveAt7And10And19) {
  const Tensor x = f32({1, 1, 3}, {1, 2, 3});
  const Attrs pad_front = window({2}, {1}, ints_attr("pads", {1, 0}));
  const Attrs include_pad = window({2}, {1}, [](io::NodeBuilder& n) {
    n.attr("pads", std::vector<int64_t>{1, 0}).attr("count_include_pad", int64_t{1});
  });
  EXPECT_EQ(ok_values(run_op("AveragePool", {x}, pad_front, 1)), (std::vector<float>{1, 1.5f, 2.5f}));
  expect_error(run_op("AveragePool", {x}, include_pad, 6), Code::kInvalidModel,
               "count_include_pad exists from AveragePool-7 on");
  EXPECT_EQ(ok_values(run_op("AveragePool", {x}, include_pad, 7)), (std::vector<float>{0.5f, 1.5f, 2.5f}));

  const Tensor x5 = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  const Attrs ceil = window({2}, {2}, int_attr("ceil_mode", 1));
  expect_error(run_op("AveragePool", {x5}, ceil, 9), Code::kInvalidModel, "ceil_mode exists from AveragePool-10 on");
  EXPECT_EQ(ok_values(run_op("AveragePool", {x5}, ceil, 10)), (std::vector<float>{1.5f, 3.5f, 5}));

  const Attrs dilated = window({2}, {1}, ints_attr("dilations", {2}));
  expect_error(run_op("AveragePool", {x5}, dilated, 18), Code::kInvalidModel, "dilations exists from AveragePool-19 on");
  EXPECT_EQ(ok_values(run_op("AveragePool", {x5}, dilated, 19)), (std::vector<float>{2, 3, 4}));
}

TEST(ComputeKernelVersions, LpPool1TakesAFloatP) {
  const Tensor x = f32({1, 1, 4}, {3, -4, 1, 0});
  EXPECT_EQ(ok_values(run_op("LpPool", {x}, window({2}, {2}), 1)), (std::vector<float>{5, 1}));  // p = 2
  const Attrs p_float = window({2}, {2}, [](io::NodeBuilder& n) { n.attr("p", 1.0f); });
  EXPECT_EQ(ok_values(run_op("LpPool", {x}, p_float, 1)), (std::vector<float>{7, 1}));
  EXPECT_EQ(ok_values(run_op("LpPool", {x}, window({2}, {2}, int_attr("p", 1)), 2)), (std::vector<float>{7, 1}));
  expect_error(run_op("LpPool", {x}, window({2}, {2}, int_attr("ceil_mode", 0)), 1), Code::kInvalidModel,
               "exist from LpPool-18 on");
}

// Parameters per (channel, position) with spatial=0: y = scale * x (mean 0, var 1, epsilon 0).
std::vector<Tensor> per_position_inputs() {
  return {f32({1, 2, 1, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {0, 0, 0, 0}),
          f32({2, 2}, {0, 0, 0, 0}), f32({2, 2}, {1, 1, 1, 1})};
}

Attrs bn_attrs(int64_t is_test, int64_t spatial) {
  return [=](io::NodeBuilder& n) {
    if (is_test >= 0) n.attr("is_test", is_test);
    if (spatial >= 0) n.attr("spatial", spatial);
    n.attr("epsilon", 0.0f);
  };
}

TEST(ComputeKernelVersions, BatchNormalizationIsTestSpatialAndTrainingMode) {
  const std::vector<float> scaled{1, 4, 9, 16};
  // 1..6: is_test (default 0, training, unsupported here) and spatial.
  expect_error(run_op("BatchNormalization", per_position_inputs(), bn_attrs(-1, 0), 6), Code::kUnsupported, "is_test=0");
  EXPECT_EQ(ok_values(run_op("BatchNormalization", per_position_inputs(), bn_attrs(1, 0), 1)), scaled);
  EXPECT_EQ(ok_values(run_op("BatchNormalization", per_position_inputs(), bn_attrs(1, 0), 6)), scaled);
  // 7, 8: no is_test, spatial still honoured.
  EXPECT_EQ(ok_values(run_op("BatchNormalization", per_position_inputs(), bn_attrs(-1, 0), 8)), scaled);
  expect_error(run_op("BatchNormalization", per_position_inputs(), bn_attrs(-1, 1), 8), Code::kInvalidModel,
               "one value per channel");
  // 9 on: parameters are per channel, whatever spatial says.
  expect_error(run_op("BatchNormalization", per_position_inputs(), bn_attrs(-1, 0), 9), Code::kInvalidModel,
               "one value per channel");
  // 14 on: training_mode and its outputs; before, only Y.
  const std::vector<Tensor> batch{f32({2, 1, 1, 2}, {1, 2, 3, 4}), f32({1}, {1}), f32({1}, {0}), f32({1}, {0}),
                                  f32({1}, {1})};
  const Attrs training = [](io::NodeBuilder& n) { n.attr("training_mode", int64_t{1}).attr("epsilon", 0.0f); };
  expect_error(run_op("BatchNormalization", batch, training, 13, 3), Code::kUnsupported, "BatchNormalization-13");
  auto r = run_op("BatchNormalization", batch, training, 14, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FLOAT_EQ(values_f32(r.value()[1])[0], 0.25f);  // 0 * 0.9 + mean 2.5 * 0.1
}

TEST(ComputeKernelVersions, GemmBroadcastAttributeBefore7) {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4}), identity = f32({2, 2}, {1, 0, 0, 1}), row = f32({2}, {10, 20});
  const std::vector<float> want{11, 22, 13, 24};
  expect_error(run_op("Gemm", {a, identity, row}, nullptr, 6), Code::kInvalidModel, "broadcast is 0");
  EXPECT_EQ(ok_values(run_op("Gemm", {a, identity, row}, int_attr("broadcast", 1), 1)), want);
  EXPECT_EQ(ok_values(run_op("Gemm", {a, identity, f32({2, 2}, {10, 20, 10, 20})}, nullptr, 6)), want);
  EXPECT_EQ(ok_values(run_op("Gemm", {a, identity, row}, nullptr, 7)), want);
}

TEST(ComputeKernelVersions, NoKernelBeforeTheFirstVersion) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor q = u8({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_error(run_op("ConvInteger", {q, q}, nullptr, 9), Code::kUnsupported, "ConvInteger");
  expect_error(run_op("QLinearConv", {q}, nullptr, 9), Code::kUnsupported, "QLinearConv");
  expect_error(run_op("MatMulInteger", {q, q}, nullptr, 9), Code::kUnsupported, "MatMulInteger");
  expect_error(run_op("QLinearMatMul", {q}, nullptr, 9), Code::kUnsupported, "QLinearMatMul");
  expect_error(run_op("LayerNormalization", {x, f32({2}, {1, 1})}, nullptr, 16), Code::kUnsupported,
               "LayerNormalization");
  expect_error(run_op("MeanVarianceNormalization", {x}, nullptr, 8), Code::kUnsupported, "MeanVarianceNormalization");
}

// A bad attribute value or type fails when the executor is planned, before any run, naming node and
// attribute.
Status plan_error(const std::string& op, const std::string& domain, int64_t opset, const Attrs& attrs) {
  io::ModelBuilder b(opset);
  b.input("x", DType::kFloat, {1, 1, 4, 4});
  b.input("w", DType::kFloat, {1, 1, 1, 1});
  b.output("y", DType::kUndefined);
  auto node = b.node(op, op == "Conv" ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"}, domain);
  node.name("the_node");
  attrs(node);
  auto model = b.build();
  EXPECT_TRUE(model.is_ok()) << model.status().to_string();
  if (!model.is_ok()) return model.status();
  auto ex = exec::Executor::create(model.value());
  return ex.is_ok() ? Status::ok() : ex.status();
}

TEST(ComputeKernelVersions, BadAttributeValuesAndTypesFailAtPlanTimeNamingNodeAndAttribute) {
  struct Case {
    std::string op, domain;
    Attrs attrs;
    std::string attribute;
  };
  const std::vector<Case> cases{
      {"Conv", "", int_attr("group", 0), "attribute 'group'"},
      {"Conv", "", [](io::NodeBuilder& n) { n.attr("auto_pad", "SAME"); }, "attribute 'auto_pad': 'SAME' is not one of"},
      {"Conv", "", ints_attr("strides", {0, 1}), "attribute 'strides'"},
      {"MaxPool", "", window({2, 2}, {1, 1}, int_attr("storage_order", 2)), "attribute 'storage_order'"},
      {"AveragePool", "", ints_attr("strides", {1, 1}), "attribute kernel_shape is required"},
      {"LpPool", "", window({2, 2}, {1, 1}, int_attr("p", 0)), "attribute 'p'"},
      {"LRN", "", int_attr("size", 0), "attribute 'size'"},
      {"Conv", kChannelsLast, ints_attr("pads", {-1, 0, 0, 0}), "attribute 'pads'"},
      {"MaxPool", kChannelsLast, window({2, 2}, {1, 1}, int_attr("storage_order", 5)), "attribute 'storage_order'"},
      // Wrong types are errors, never an INT <-> FLOAT conversion.
      {"Conv", "", [](io::NodeBuilder& n) { n.attr("group", 1.0f); }, "attribute 'group' must be INT, got FLOAT"},
      {"MaxPool", "", window({2, 2}, {1, 1}, [](io::NodeBuilder& n) { n.attr("ceil_mode", 0.0f); }),
       "attribute 'ceil_mode' must be INT"},
      {"LRN", "", [](io::NodeBuilder& n) { n.attr("size", 3).attr("alpha", 1); }, "attribute 'alpha' must be FLOAT, got INT"},
      {"Conv", "", int_attr("auto_pad", 1), "attribute 'auto_pad' must be STRING"},
      {"Conv", "", [](io::NodeBuilder& n) { n.attr("pads", std::vector<float>{0, 0, 0, 0}); },
       "attribute 'pads' must be INTS"},
  };
  for (const Case& c : cases) {
    const Status st = plan_error(c.op, c.domain, 13, c.attrs);
    EXPECT_EQ(st.code(), Code::kInvalidModel) << c.op << ": " << st.to_string();
    EXPECT_NE(st.to_string().find("node 'the_node'"), std::string::npos) << st.to_string();
    EXPECT_NE(st.to_string().find(c.attribute), std::string::npos) << st.to_string();
  }
}

// channels_last runs the default-domain kernels with their opset-7 semantics whatever the model's
// default opset: BatchNormalization honours spatial=0, MaxPool takes every attribute.
TEST(ComputeKernelVersions, ChannelsLastRunsOpset7Semantics) {
  NodeCase bn{"BatchNormalization", kChannelsLast, 13, {}, per_position_inputs(), bn_attrs(-1, 0)};
  // Channels-last X (1, 1, 2, 2) holds the channels-first (1, 2, 1, 2) values transposed.
  bn.inputs[0] = f32({1, 1, 2, 2}, {1, 3, 2, 4});
  auto r = run_node(bn);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{1, 9, 4, 16}));
  NodeCase pool{"MaxPool", kChannelsLast, 13, {}, {f32({1, 5, 1}, {1, 2, 3, 4, 5})}, window({2}, {2}, int_attr("ceil_mode", 1))};
  r = run_node(pool);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{2, 4, 5}));
}

}  // namespace
}  // namespace qonnx::test
