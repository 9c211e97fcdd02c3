// Reductions, ArgMax/ArgMin, CumSum and TopK: exact values, edge cases and errors.
#include <cmath>
#include <limits>
#include <map>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

NodeCase reduce(const std::string& op, Tensor x, std::vector<int64_t> axes, int keepdims, int opset = 13) {
  NodeCase c{op};
  c.opset = opset;
  const bool axes_input = op == "ReduceSum" ? opset >= 13 : opset >= 18;
  c.inputs = {std::move(x)};
  if (axes_input && !axes.empty()) c.inputs.push_back(i64({static_cast<int64_t>(axes.size())}, axes));
  c.attrs = [=](io::NodeBuilder& n) {
    n.attr("keepdims", keepdims);
    if (!axes_input && !axes.empty()) n.attr("axes", axes);
  };
  return c;
}

TEST(ReduceKernel, SumAxesInputAndAttribute) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = run1(reduce("ReduceSum", x, {1}, 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{2}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{6, 15}));
  r = run1(reduce("ReduceSum", x, {-2}, 1, 11));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{1, 3}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{5, 7, 9}));
  r = run1(reduce("ReduceMean", x, {}, 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), Dims{});
  EXPECT_EQ(values_f32(*r), (std::vector<float>{3.5f}));
}

TEST(ReduceKernel, NoopWithEmptyAxes) {
  NodeCase c = reduce("ReduceSum", f32({2}, {1, 2}), {}, 1);
  c.inputs.push_back(i64({0}, {}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("noop_with_empty_axes", 1); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 2}));
}

// Each version range parses its own form: the axes attribute up to 17, input #1 (with
// noop_with_empty_axes) from 18, and bools for ReduceMax/ReduceMin from 20 (false < true).
TEST(ReduceKernel, EveryVersionRangeOfTheNineOpsThatMovedAt18) {
  const Tensor x = f32({2, 3}, {1, -2, 3, -4, 5, -6});
  const std::map<std::string, std::vector<float>> along_1 = {
      {"ReduceL1", {6, 15}}, {"ReduceMax", {3, 5}}, {"ReduceMin", {-2, -6}}, {"ReduceProd", {-6, 120}}, {"ReduceSumSquare", {14, 77}}};
  for (const auto& [op, expected] : along_1) {
    for (int opset : {13, 17, 18, 20, 21}) {
      auto r = run1(reduce(op, x, {1}, 0, opset));
      ASSERT_TRUE(r.is_ok()) << op << " " << opset << ": " << r.status().to_string();
      EXPECT_EQ(values_f32(*r), expected) << op << " " << opset;
    }
    // At 18 an axes attribute is no longer read: without the input every axis is reduced.
    NodeCase attr_only = reduce(op, x, {}, 0, 18);
    attr_only.attrs = [](io::NodeBuilder& n) { n.attr("keepdims", 0).attr("axes", std::vector<int64_t>{1}); };
    auto all = run1(attr_only);
    ASSERT_TRUE(all.is_ok()) << op << ": " << all.status().to_string();
    EXPECT_EQ(all->dims(), Dims{}) << op;
    // noop_with_empty_axes exists from 18 only.
    NodeCase noop = reduce(op, x, {}, 1, 17);
    noop.attrs = [](io::NodeBuilder& n) { n.attr("noop_with_empty_axes", 1); };
    auto r17 = run1(noop);
    ASSERT_TRUE(r17.is_ok()) << op << ": " << r17.status().to_string();
    EXPECT_EQ(r17->dims(), (Dims{1, 1})) << op;
    noop.opset = 18;
    auto r18 = run1(noop);
    ASSERT_TRUE(r18.is_ok()) << op << ": " << r18.status().to_string();
    EXPECT_TRUE(r18->identical(x)) << op;
  }
  const Tensor b = make<bool>(DType::kBool, {2, 3}, {false, true, false, true, true, true});
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    expect_error(run_node(reduce(op, b, {1}, 0, 18)), Code::kInvalidModel, "is bool, which");
    auto r = run1(reduce(op, b, {1}, 0, 20));
    ASSERT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
    ASSERT_EQ(r->dtype(), DType::kBool);
    const bool is_max = std::string(op) == "ReduceMax";
    EXPECT_EQ(r->data<bool>()[0], is_max);  // any / all of {false, true, false}
    EXPECT_EQ(r->data<bool>()[1], true);
  }
  expect_error(run_node(reduce("ReduceSum", b, {1}, 0, 21)), Code::kInvalidModel, "is bool, which");
}

TEST(ReduceKernel, BadAxesAreErrors) {
  auto r = run_node(reduce("ReduceMax", f32({2}, {1, 2}), {1}, 1, 13));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("out of range"), std::string::npos) << r.status().to_string();
  r = run_node(reduce("ReduceSum", f32({2, 2}, {}), {0, -2}, 1));
  EXPECT_FALSE(r.is_ok());
}

TEST(ReduceKernel, IntegersAreExact) {
  Tensor x = make<int32_t>(DType::kInt32, {3}, {2000000000, 2000000000, -2000000000});
  auto r = run1(reduce("ReduceSum", x, {}, 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->data<int32_t>()[0], 2000000000);
  r = run1(reduce("ReduceProd", make<int64_t>(DType::kInt64, {3}, {-3, 5, 7}), {}, 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->data<int64_t>()[0], -105);
}

TEST(ReduceKernel, EmptyReductionsGiveIdentities) {
  const Tensor empty = f32({0, 2}, {});
  auto sum = run1(reduce("ReduceSum", empty, {0}, 0));
  auto prod = run1(reduce("ReduceProd", empty, {0}, 0, 11));
  auto mx = run1(reduce("ReduceMax", empty, {0}, 0, 11));
  ASSERT_TRUE(sum.is_ok() && prod.is_ok() && mx.is_ok());
  EXPECT_EQ(values_f32(*sum), (std::vector<float>{0, 0}));
  EXPECT_EQ(values_f32(*prod), (std::vector<float>{1, 1}));
  EXPECT_EQ(values_f32(*mx)[0], -std::numeric_limits<float>::infinity());
}

TEST(ReduceKernel, MaxPropagatesNanAndLogSumExpIsStable) {
  auto r = run1(reduce("ReduceMax", f32({3}, {1, std::nanf(""), 2}), {}, 0, 11));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(std::isnan(values_f32(*r)[0]));
  r = run1(reduce("ReduceLogSumExp", f32({2}, {1000, 1000}), {}, 0, 11));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(values_f32(*r)[0], 1000.0f + std::log(2.0f), 1e-3);
}

TEST(ReduceKernel, Float16SumRoundsBack) {
  // 1.0 + 2.0 + 0.5 in float16 bits.
  Tensor x = make<uint16_t>(DType::kFloat16, {3}, {0x3C00, 0x4000, 0x3800});
  auto r = run1(reduce("ReduceSum", x, {}, 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->data<uint16_t>()[0], 0x4300);  // 3.5
}

TEST(ReduceKernel, ArgMaxSelectLastIndexAndEmptyAxis) {
  NodeCase c{"ArgMax"};
  c.inputs = {f32({2, 3}, {1, 3, 3, 5, 5, 0})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("axis", 1).attr("keepdims", 0); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{1, 0}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("axis", 1).attr("keepdims", 0).attr("select_last_index", 1); };
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{2, 1}));
  c.inputs = {f32({2, 0}, {})};
  EXPECT_FALSE(run_node(c).is_ok());
}

TEST(ReduceKernel, CumSumExclusiveReverse) {
  NodeCase c{"CumSum"};
  c.inputs = {f32({4}, {1, 2, 3, 4}), i64({}, {0})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("exclusive", 1).attr("reverse", 1); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{9, 7, 4, 0}));
  c.inputs = {f32({4}, {1, 2, 3, 4}), i64({}, {1})};
  EXPECT_FALSE(run_node(c).is_ok());
}

TEST(ReduceKernel, TopKTiesPreferLowerIndex) {
  NodeCase c{"TopK"};
  c.opset = 11;
  c.num_outputs = 2;
  c.inputs = {f32({5}, {2, 7, 2, 7, 1}), i64({1}, {3})};
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{7, 7, 2}));
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{1, 3, 0}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("largest", 0); };
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>(r.value()[1]), (std::vector<int64_t>{4, 0, 2}));
  c.inputs = {f32({5}, {}), i64({1}, {6})};
  EXPECT_FALSE(run_node(c).is_ok());
}

}  // namespace
}  // namespace qonnx::test
