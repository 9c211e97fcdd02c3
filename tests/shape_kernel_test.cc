// Shape and data-movement kernels: exact values on small cases, every-dtype moves, index and
// shape errors.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace qonnx::test {
namespace {

TEST(ShapeKernel, GatherNegativeIndexAndAxis) {
  NodeCase c{"Gather"};
  c.inputs = {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {-1, 0})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("axis", 1); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{2, 2}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{3, 1, 6, 4}));
}

TEST(ShapeKernel, GatherOutOfRangeIndexIsAnError) {
  NodeCase c{"Gather"};
  c.inputs = {f32({3}, {1, 2, 3}), i64({2}, {0, 3})};
  expect_error(c, "index 3 is out of range");
  c.inputs = {f32({3}, {1, 2, 3}), i64({1}, {-4})};
  expect_error(c, "index -4 is out of range");
  // Gathering from an empty axis: every index is out of range.
  c.inputs = {f32({0}, {}), i64({1}, {0})};
  expect_error(c, "out of range");
}

TEST(ShapeKernel, GatherStringsAndZeroSize) {
  NodeCase c{"Gather"};
  c.inputs = {strings({3}, {"a", "bb", "ccc"}), i64({2}, {2, 0})};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->strings(), (std::vector<std::string>{"ccc", "a"}));
  c.inputs = {f32({3}, {1, 2, 3}), i64({0}, {})};
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{0}));
}

TEST(ShapeKernel, GatherElementsAndNDCheckIndices) {
  NodeCase c{"GatherElements"};
  c.inputs = {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("axis", 1); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 1, 4, 3}));
  c.inputs = {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 2, 1, 0})};
  expect_error(c, "out of range");

  NodeCase nd{"GatherND"};
  nd.inputs = {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 1, 1, 0})};
  r = run1(nd);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{2, 3}));
  nd.inputs = {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {5, 0})};
  expect_error(nd, "index 5 is out of range");
}

TEST(ShapeKernel, ScatterChecksIndicesAndReduces) {
  NodeCase c{"ScatterElements"};
  c.opset = 16;
  c.inputs = {f32({3}, {1, 1, 1}), i64({2}, {2, 2}), f32({2}, {5, 7})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("reduction", "add"); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 1, 13}));
  c.inputs = {f32({3}, {1, 1, 1}), i64({1}, {3}), f32({1}, {5})};
  expect_error(c, "out of range");

  NodeCase nd{"ScatterND"};
  nd.inputs = {f32({4}, {1, 2, 3, 4}), i64({2, 1}, {3, -4}), f32({2}, {9, 8})};
  r = run1(nd);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{8, 2, 3, 9}));
  nd.inputs = {f32({4}, {1, 2, 3, 4}), i64({1, 1}, {4}), f32({1}, {9})};
  expect_error(nd, "out of range");
}

TEST(ShapeKernel, OneHotOutOfRangeGivesOffRow) {
  NodeCase c{"OneHot"};
  c.opset = 11;
  c.inputs = {i64({3}, {1, -1, 7}), f32s(3.0f), f32({2}, {0, 5})};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{3, 3}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{0, 5, 0, 0, 0, 5, 0, 0, 0}));
}

TEST(ShapeKernel, ReshapeZeroMinusOneAndErrors) {
  NodeCase c{"Reshape"};
  c.inputs = {f32({2, 3, 4}, {}), i64({2}, {0, -1})};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{2, 12}));
  c.inputs = {f32({2, 3}, {}), i64({2}, {4, 2})};
  expect_error(c, "cannot reshape");
  c.inputs = {f32({2, 3}, {}), i64({2}, {-1, -1})};
  expect_error(c, "more than one -1");
  c.inputs = {f32({2, 3}, {}), i64({2}, {-2, 3})};
  expect_error(c, "negative");
  c.inputs = {f32({6}, {}), i64({2}, {INT64_MAX, 4})};
  expect_error(c, "");
  // allowzero: a 0 is a real zero-size dim.
  c.opset = 14;
  c.inputs = {f32({0, 3}, {}), i64({2}, {3, 0})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("allowzero", 1); };
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{3, 0}));
}

TEST(ShapeKernel, TransposeFloat16AndBadPerm) {
  NodeCase c{"Transpose"};
  Tensor x = make<uint16_t>(DType::kFloat16, {2, 3}, {1, 2, 3, 4, 5, 6});
  c.inputs = {x};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dtype(), DType::kFloat16);
  EXPECT_EQ(r->dims(), (Dims{3, 2}));
  EXPECT_EQ(std::vector<uint16_t>(r->data<uint16_t>(), r->data<uint16_t>() + 6), (std::vector<uint16_t>{1, 4, 2, 5, 3, 6}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("perm", std::vector<int64_t>{0, 0}); };
  expect_error(c, "not a permutation");
}

TEST(ShapeKernel, SliceNegativeStepsAndClamping) {
  NodeCase c{"Slice"};
  c.inputs = {f32({5}, {0, 1, 2, 3, 4}), i64({1}, {100}), i64({1}, {INT64_MIN}), i64({1}, {0}), i64({1}, {-2})};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{4, 2, 0}));
  c.inputs = {f32({5}, {0, 1, 2, 3, 4}), i64({1}, {-3}), i64({1}, {INT64_MAX}), Tensor(), Tensor()};
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{2, 3, 4}));
  c.inputs = {f32({5}, {}), i64({1}, {0}), i64({1}, {5}), i64({1}, {0}), i64({1}, {0})};
  expect_error(c, "steps must not be 0");
  c.inputs = {f32({5}, {}), i64({1}, {0}), i64({1}, {5}), i64({1}, {1})};
  expect_error(c, "out of range");
}

TEST(ShapeKernel, PadModes) {
  auto pad = [](const std::string& mode) {
    NodeCase c{"Pad"};
    c.inputs = {f32({3}, {1, 2, 3}), i64({2}, {2, 3}), f32s(9.0f)};
    c.attrs = [mode](io::NodeBuilder& n) { n.attr("mode", mode); };
    auto r = run1(c);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? values_f32(*r) : std::vector<float>{};
  };
  EXPECT_EQ(pad("constant"), (std::vector<float>{9, 9, 1, 2, 3, 9, 9, 9}));
  EXPECT_EQ(pad("edge"), (std::vector<float>{1, 1, 1, 2, 3, 3, 3, 3}));
  EXPECT_EQ(pad("reflect"), (std::vector<float>{3, 2, 1, 2, 3, 2, 1, 2}));
  NodeCase neg{"Pad"};
  neg.inputs = {f32({3}, {1, 2, 3}), i64({2}, {-4, 0})};
  expect_error(neg, "invalid");
}

TEST(ShapeKernel, ConcatWithEmptyInputAndMismatch) {
  NodeCase c{"Concat"};
  c.inputs = {f32({1, 2}, {1, 2}), f32({0, 2}, {}), f32({1, 2}, {3, 4})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("axis", 0); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{2, 2}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 2, 3, 4}));
  c.inputs = {f32({1, 2}, {1, 2}), f32({1, 3}, {})};
  expect_error(c, "does not match");
}

TEST(ShapeKernel, SplitNumOutputsUneven) {
  NodeCase c{"Split"};
  c.opset = 18;
  c.num_outputs = 3;
  c.inputs = {f32({7}, {0, 1, 2, 3, 4, 5, 6})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("num_outputs", 3); };
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(values_f32(r.value()[2]), (std::vector<float>{6}));
}

// Each version range reads its own form of the sizes: the attribute (2..12), the input (13 on), equal
// parts without it (13..17; an attribute num_outputs is not read there), num_outputs (18 on).
TEST(ShapeKernel, SplitEveryVersionRange) {
  NodeCase c{"Split"};
  c.num_outputs = 2;
  c.inputs = {f32({6}, {0, 1, 2, 3, 4, 5})};
  c.opset = 11;
  c.attrs = [](io::NodeBuilder& n) { n.attr("split", std::vector<int64_t>{2, 4}); };
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0, 1}));
  c.opset = 13;  // the attribute is not read any more: equal parts
  r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{0, 1, 2}));
  for (int opset : {13, 18, 21}) {
    c.opset = opset;
    c.attrs = nullptr;
    c.inputs = {f32({6}, {0, 1, 2, 3, 4, 5}), i64({2}, {5, 1})};
    r = run_node(c);
    ASSERT_TRUE(r.is_ok()) << opset << ": " << r.status().to_string();
    EXPECT_EQ(values_f32(r.value()[1]), (std::vector<float>{5})) << opset;
  }
  c.inputs = {f32({6}, {0, 1, 2, 3, 4, 5})};
  c.opset = 18;
  expect_error(c, "either input 'split' or attribute 'num_outputs' is required");
}

TEST(ShapeKernel, ExpandBoolAndTileErrors) {
  NodeCase c{"Expand"};
  c.inputs = {make<bool>(DType::kBool, {2, 1}, {true, false}), i64({2}, {2, 3})};
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(std::vector<bool>(r->data<bool>(), r->data<bool>() + 6), (std::vector<bool>{1, 1, 1, 0, 0, 0}));
  c.inputs = {f32({2}, {}), i64({1}, {3})};
  expect_error(c, "does not broadcast");

  NodeCase t{"Tile"};
  t.inputs = {f32({2}, {1, 2}), i64({1}, {-1})};
  expect_error(t, "negative");
  t.inputs = {f32({2}, {1, 2}), i64({1}, {INT64_MAX})};
  expect_error(t, "");
}

TEST(ShapeKernel, ConstantOfShapeRejectsBadShapes) {
  NodeCase c{"ConstantOfShape"};
  c.opset = 11;
  c.inputs = {i64({2}, {2, -1})};
  expect_error(c, "negative");
  c.inputs = {i64({3}, {1 << 20, 1 << 20, 1 << 10})};
  expect_error(c, "too large");
  c.inputs = {i64({3}, {1 << 30, 1 << 30, 1 << 30})};
  expect_error(c, "overflows");
}

TEST(ShapeKernel, DepthToSpaceAndResize) {
  NodeCase d{"DepthToSpace"};
  d.inputs = {f32({1, 4, 1, 1}, {1, 2, 3, 4})};
  d.attrs = [](io::NodeBuilder& n) { n.attr("blocksize", 2); };
  auto r = run1(d);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dims(), (Dims{1, 1, 2, 2}));
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 2, 3, 4}));

  NodeCase c{"Resize"};
  c.inputs = {f32({1, 2}, {0, 10}), Tensor(), f32({2}, {1, 2})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("mode", "linear").attr("coordinate_transformation_mode", "asymmetric"); };
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{0, 5, 10, 10}));
  c.inputs = {f32({1, 2}, {0, 10}), Tensor(), f32({2}, {1, -2})};
  expect_error(c, "invalid");
}

// Hostile parameters must give a Status (or a valid result), never a crash or a huge allocation.
TEST(ShapeKernel, HostileParametersAreHandled) {
  NodeCase range{"Range"};
  range.opset = 11;
  range.inputs = {f32s(0.0f), f32s(1e30f), f32s(1e-30f)};
  EXPECT_FALSE(run_node(range).is_ok());
  range.inputs = {f32s(0.0f), f32s(1.0f), f32s(0.0f)};
  EXPECT_FALSE(run_node(range).is_ok());

  NodeCase pad{"Pad"};
  pad.inputs = {f32({2}, {1, 2}), i64({2}, {INT64_MAX, INT64_MAX})};
  EXPECT_FALSE(run_node(pad).is_ok());

  NodeCase resize{"Resize"};
  resize.inputs = {f32({1, 4}, {1, 2, 3, 4}), Tensor(), Tensor(), i64({2}, {1, 2})};
  resize.attrs = [](io::NodeBuilder& n) {
    n.attr("mode", "cubic").attr("coordinate_transformation_mode", "align_corners").attr("exclude_outside", 1);
  };
  EXPECT_TRUE(run_node(resize).is_ok());
  resize.inputs = {f32({1, 4}, {1, 2, 3, 4}), Tensor(), f32({2}, {1e-30f, 1e30f})};
  EXPECT_FALSE(run_node(resize).is_ok());

  NodeCase onehot{"OneHot"};
  onehot.opset = 11;
  onehot.inputs = {i64({1}, {0}), f32s(1e20f), f32({2}, {0, 1})};
  EXPECT_FALSE(run_node(onehot).is_ok());
}

// EyeLike: dtype and k parsed once per node; an unknown or unsupported dtype fails at plan time.
TEST(ShapeKernel, EyeLikeDtypeAndDiagonal) {
  NodeCase c{"EyeLike"};
  c.inputs = {f32({2, 3}, {})};
  c.attrs = [](io::NodeBuilder& n) { n.attr("k", 1).attr("dtype", static_cast<int64_t>(DType::kInt32)); };
  auto r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(*r), (std::vector<int32_t>{0, 1, 0, 0, 0, 1}));
  c.attrs = nullptr;
  r = run1(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(*r), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  c.attrs = [](io::NodeBuilder& n) { n.attr("dtype", static_cast<int64_t>(DType::kString)); };
  expect_error(c, "EyeLike to string is not supported");
  c.attrs = [](io::NodeBuilder& n) { n.attr("dtype", int64_t{99}); };
  expect_error(c, "unknown dtype 99");
}

}  // namespace
}  // namespace qonnx::test
