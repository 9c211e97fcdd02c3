// The range analysis op by op (qonnx/analysis/range.h): one-node (or two-node) models per op class,
// generated over shapes, attributes, input intervals and seeds, run through the executor on random and
// adversarial inputs (tests/support/range_check.h): every value of every tensor inside its interval,
// per tensor and per channel. Plus: where the bound is exact it is reached, and what is not bounded
// says so in a note.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "support/range_check.h"
#include "support/test_util.h"

namespace qonnx {
namespace {

using analysis::Interval;
using test::check_sound;
using test::range_probe_inputs;
using test::with_shapes;

constexpr const char* kQ = dialect::kGeneralDomain;

struct Box {
  float lo, hi;
};

// x [dims] -> Mul by a per-channel constant (so channels differ) -> the op under test -> y, built by
// `op` (which names its output "y" and reads "xm"). Shapes inferred; checked on every probe input.
using OpBuilder = std::function<void(io::ModelBuilder&)>;

Result<analysis::RangeAnalysis> check_op(const std::string& what, const Dims& dims, Box box, const OpBuilder& op,
                                         unsigned seed, int64_t opset = 13, bool per_channel_mul = true) {
  io::ModelBuilder b(opset);
  b.import(kQ, 1).input("x", DType::kFloat, dims).output("y", DType::kFloat);
  if (per_channel_mul && dims.size() >= 2) {
    Dims cdims(dims.size(), 1);
    cdims[1] = dims[1];
    Tensor c(DType::kFloat, cdims);
    for (int64_t i = 0; i < c.numel(); ++i) c.data<float>()[i] = 0.5f + 0.25f * static_cast<float>(i % 4);
    b.initializer("cm", c);
  } else {
    b.initializer("cm", test::f32s(1.0f));
  }
  b.node("Mul", {"x", "cm"}, {"xm"});
  op(b);
  auto model = with_shapes(b);
  if (!model.is_ok()) return model.status();
  std::mt19937 rng(seed);
  return check_sound(model.value(), box.lo, box.hi, range_probe_inputs(rng, dims, box.lo, box.hi), what);
}

void expect_checked(const Result<analysis::RangeAnalysis>& a, const std::string& what) {
  ASSERT_TRUE(a.is_ok()) << what << ": " << a.status().message();
  const analysis::TensorRange& y = a.value().tensors.at("y");
  EXPECT_TRUE(std::isfinite(y.all.lo) && std::isfinite(y.all.hi)) << what << ": y not bounded (" << y.note << ")";
}

const std::vector<Dims> kShapes = {{2, 3, 5, 4}, {1, 4, 7}, {3, 2, 4, 4, 3}};

// Elementwise float ops: the kernel's value at the interval ends (plus the documented margin for
// approximations) holds every value in between.
TEST(RangeOps, ElementwiseOpsHoldEveryValue) {
  const std::vector<std::pair<std::string, std::vector<Box>>> cases = {
      {"Neg", {{-3, 2.5f}, {1, 9}}},        {"Floor", {{-3.7f, 2.5f}, {0.1f, 0.9f}}},
      {"Ceil", {{-3.7f, 2.5f}}},            {"Round", {{-2.5f, 3.5f}, {-0.5f, 0.5f}}},
      {"Sqrt", {{0, 9}, {1e-6f, 1e6f}}},    {"Exp", {{-100, 80}, {-1, 1}, {-3, 0}}},
      {"Log", {{1e-30f, 1e30f}, {0.5f, 2}}}, {"Erf", {{-5, 5}, {-0.5f, 0.25f}, {0.9f, 1}}},
      {"Sigmoid", {{-30, 30}, {-1, 1}, {-18.5f, -17.5f}}},
      {"Tanh", {{-12, 12}, {-0.1f, 0.3f}, {8.5f, 9.5f}}},
      {"Abs", {{-3, 2}, {-5, -1}, {2, 7}}}};
  for (const auto& [op, boxes] : cases)
    for (const Box& box : boxes)
      for (size_t s = 0; s < kShapes.size(); ++s) {
        const std::string what = fmt::format("{} on [{}, {}] shape {}", op, box.lo, box.hi, s);
        auto a = check_op(what, kShapes[s], box, [op = op](io::ModelBuilder& b) { b.node(op, {"xm"}, {"y"}); },
                          static_cast<unsigned>(s + 1));
        expect_checked(a, what);
        const bool outer_bound = op == "Sigmoid" || op == "Tanh" || op == "Erf";
        if (a.is_ok() && !outer_bound) {
          EXPECT_EQ(a->tensors.at("y").channels.size(), static_cast<size_t>(kShapes[s][1])) << what;
        }
      }
}

// Tanh stays within its mathematical bounds plus the approximation's overshoot; Floor is exact at the ends.
TEST(RangeOps, ElementwiseBoundsAreTight) {
  auto a = check_op("Tanh", {1, 2}, {-20, 20}, [](io::ModelBuilder& b) { b.node("Tanh", {"xm"}, {"y"}); }, 1, 13, false);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_GE(a->tensors.at("y").all.lo, -1.0001);
  EXPECT_LE(a->tensors.at("y").all.hi, 1.0001);
  auto f = check_op("Floor", {1, 2}, {-2.5f, 3.5f}, [](io::ModelBuilder& b) { b.node("Floor", {"xm"}, {"y"}); }, 1, 13, false);
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(f->tensors.at("y").all.lo, -3.0);
  EXPECT_EQ(f->tensors.at("y").all.hi, 3.0);
}

TEST(RangeOps, PoolsHoldEveryValue) {
  struct Pool {
    std::string op;
    std::function<void(io::NodeBuilder&)> attrs;
  };
  auto k = [](std::vector<int64_t> v) { return v; };
  const std::vector<Pool> pools = {
      {"MaxPool", [&](io::NodeBuilder& n) { n.attr("kernel_shape", k({2, 2})).attr("pads", k({1, 1, 1, 1})); }},
      {"MaxPool", [&](io::NodeBuilder& n) { n.attr("kernel_shape", k({3, 2})).attr("strides", k({2, 2})).attr("ceil_mode", 1); }},
      {"MaxPool", [&](io::NodeBuilder& n) { n.attr("kernel_shape", k({2, 2})).attr("dilations", k({2, 1})).attr("auto_pad", "SAME_UPPER"); }},
      {"AveragePool", [&](io::NodeBuilder& n) { n.attr("kernel_shape", k({3, 3})).attr("pads", k({1, 1, 1, 1})); }},
      {"AveragePool", [&](io::NodeBuilder& n) {
         n.attr("kernel_shape", k({3, 3})).attr("pads", k({1, 2, 1, 0})).attr("count_include_pad", 1);
       }},
      {"AveragePool", [&](io::NodeBuilder& n) { n.attr("kernel_shape", k({2, 3})).attr("strides", k({2, 1})).attr("ceil_mode", 1); }},
      {"GlobalAveragePool", nullptr},
      {"GlobalMaxPool", nullptr}};
  const std::vector<Box> boxes = {{-3, 2}, {1, 7}, {-0.1f, -0.01f}};
  for (size_t p = 0; p < pools.size(); ++p)
    for (const Box& box : boxes)
      for (const Dims& dims : {Dims{2, 3, 5, 6}, Dims{1, 2, 4, 4}}) {
        const std::string what = fmt::format("{} #{} on [{}, {}] {}x{}", pools[p].op, p, box.lo, box.hi, dims[2], dims[3]);
        auto a = check_op(what, dims, box, [&](io::ModelBuilder& b) {
          auto n = b.node(pools[p].op, {"xm"}, {"y"});
          if (pools[p].attrs) pools[p].attrs(n);
        }, static_cast<unsigned>(p + 3), 19);
        expect_checked(a, what);
      }
}

// The pools' bounds are exact: all inputs at one end reach them (AveragePool with count_include_pad
// over an input range without 0 reaches into 0's direction at the corners).
TEST(RangeOps, AveragePoolWithPaddingCountedReachesTowardZero) {
  auto a = check_op("avg", {1, 1, 4, 4}, {2, 4}, [](io::ModelBuilder& b) {
    b.node("AveragePool", {"xm"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{3, 3})
        .attr("pads", std::vector<int64_t>{1, 1, 1, 1}).attr("count_include_pad", 1);
  }, 1, 13, false);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  // Corner windows hold 4 of 9 values: 4 * 2 / 9 at the lowest.
  EXPECT_EQ(a->tensors.at("y").all.lo, static_cast<double>(8.0f / 9.0f));
  EXPECT_EQ(a->tensors.at("y").all.hi, 4.0);
}

TEST(RangeOps, DataMovementHoldsEveryValue) {
  auto ints = [](std::vector<int64_t> v) { return v; };
  const std::vector<std::pair<std::string, OpBuilder>> ops = {
      {"Concat", [](io::ModelBuilder& b) {
         b.initializer("c2", test::f32s(-4.0f));
         b.node("Mul", {"xm", "c2"}, {"xn"});
         b.node("Concat", {"xm", "xn"}, {"y"}).attr("axis", 1);
       }},
      {"Concat0", [](io::ModelBuilder& b) { b.node("Concat", {"xm", "xm"}, {"y"}).attr("axis", 0); }},
      {"PadConstant", [&](io::ModelBuilder& b) {
         b.initializer("pads", test::i64({8}, {0, 0, 1, 2, 0, 0, 2, 1})).initializer("pv", test::f32s(9.5f));
         b.node("Pad", {"xm", "pads", "pv"}, {"y"});
       }},
      {"PadReflect", [&](io::ModelBuilder& b) {
         b.initializer("pads", test::i64({8}, {0, 0, 1, 1, 0, 0, 1, 1}));
         b.node("Pad", {"xm", "pads"}, {"y"}).attr("mode", "reflect");
       }},
      {"Slice", [&](io::ModelBuilder& b) {
         b.initializer("st", test::i64({1}, {1})).initializer("en", test::i64({1}, {3})).initializer("ax", test::i64({1}, {2}));
         b.node("Slice", {"xm", "st", "en", "ax"}, {"y"});
       }},
      {"Gather", [&](io::ModelBuilder& b) {
         b.initializer("idx", test::i64({3}, {1, 0, 1}));
         b.node("Gather", {"xm", "idx"}, {"y"}).attr("axis", 1);
       }},
      {"Split", [&](io::ModelBuilder& b) {
         b.node("Split", {"xm"}, {"y", "y2"}).attr("axis", 0);
       }},
      {"Tile", [&](io::ModelBuilder& b) {
         b.initializer("reps", test::i64({4}, {1, 2, 1, 2}));
         b.node("Tile", {"xm", "reps"}, {"y"});
       }},
      {"Expand", [&](io::ModelBuilder& b) {
         b.initializer("shape", test::i64({5}, {2, 1, 1, 1, 1}));
         b.node("Expand", {"xm", "shape"}, {"y"});
       }},
      {"Transpose", [&](io::ModelBuilder& b) { b.node("Transpose", {"xm"}, {"y"}).attr("perm", ints({0, 2, 1, 3})); }},
      {"DepthToSpace", [&](io::ModelBuilder& b) {
         b.node("SpaceToDepth", {"xm"}, {"s2d"}).attr("blocksize", 2);
         b.node("DepthToSpace", {"s2d"}, {"y"}).attr("blocksize", 2);
       }},
      {"Squeeze", [&](io::ModelBuilder& b) {
         b.initializer("axes", test::i64({1}, {0}));
         b.node("Unsqueeze", {"xm", "axes"}, {"u"});
         b.node("Squeeze", {"u", "axes"}, {"y"});
       }},
      {"ResizeNearest", [&](io::ModelBuilder& b) {
         b.initializer("scales", test::f32({4}, {1, 1, 2, 1.5f}));
         b.node("Resize", {"xm", "", "scales"}, {"y"}).attr("mode", "nearest");
       }},
      {"ResizeLinear", [&](io::ModelBuilder& b) {
         b.initializer("scales", test::f32({4}, {1, 1, 2.5f, 1.75f}));
         b.node("Resize", {"xm", "", "scales"}, {"y"}).attr("mode", "linear");
       }},
      {"ResizeLinearAlign", [&](io::ModelBuilder& b) {
         b.initializer("scales", test::f32({4}, {1, 1, 3, 2}));
         b.node("Resize", {"xm", "", "scales"}, {"y"}).attr("mode", "linear").attr("coordinate_transformation_mode", "align_corners");
       }},
      {"ReduceMax", [&](io::ModelBuilder& b) { b.node("ReduceMax", {"xm"}, {"y"}).attr("axes", ints({2, 3})); }},
      {"ReduceMin", [&](io::ModelBuilder& b) { b.node("ReduceMin", {"xm"}, {"y"}).attr("axes", ints({1})).attr("keepdims", 0); }},
      {"ReduceSum", [&](io::ModelBuilder& b) {
         b.initializer("axes", test::i64({2}, {2, 3}));
         b.node("ReduceSum", {"xm", "axes"}, {"y"});
       }},
      {"ReduceMean", [&](io::ModelBuilder& b) { b.node("ReduceMean", {"xm"}, {"y"}).attr("axes", ints({1, 3})); }},
      {"Softmax", [&](io::ModelBuilder& b) { b.node("Softmax", {"xm"}, {"y"}).attr("axis", 1); }},
      {"SoftmaxLast", [&](io::ModelBuilder& b) { b.node("Softmax", {"xm"}, {"y"}); }},
      {"Min", [&](io::ModelBuilder& b) {
         b.initializer("c3", test::f32s(0.5f));
         b.node("Min", {"xm", "c3", "x"}, {"y"});
       }},
      {"Max", [&](io::ModelBuilder& b) {
         b.initializer("c3", test::f32s(-0.5f));
         b.node("Max", {"xm", "c3"}, {"y"});
       }},
      {"ClipByTensors", [&](io::ModelBuilder& b) {  // bounds computed from x: scalars at run time
         b.node("ReduceMin", {"xm"}, {"lo_t"}).attr("keepdims", 0);
         b.initializer("c5", test::f32s(0.5f));
         b.node("ReduceMax", {"xm"}, {"hi_all"}).attr("keepdims", 0);
         b.node("Mul", {"hi_all", "c5"}, {"hi_t"});
         b.node("Clip", {"xm", "lo_t", "hi_t"}, {"y"});
       }}};
  const std::vector<Box> boxes = {{-3, 2}, {1, 7}, {-60, 40}};
  for (size_t o = 0; o < ops.size(); ++o)
    for (const Box& box : boxes)
      for (unsigned seed : {1u, 2u}) {
        const std::string what = fmt::format("{} on [{}, {}] seed {}", ops[o].first, box.lo, box.hi, seed);
        auto a = check_op(what, {2, 3, 4, 4}, box, ops[o].second, seed, 13);
        expect_checked(a, what);
      }
}

// Softmax is bounded by [0, 1] plus its rounding, whatever the input.
TEST(RangeOps, SoftmaxStaysInTheUnitInterval) {
  auto a = check_op("softmax", {2, 5}, {-1e6f, 1e6f}, [](io::ModelBuilder& b) { b.node("Softmax", {"xm"}, {"y"}); }, 1);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a->tensors.at("y").all.lo, 0.0);
  EXPECT_LT(a->tensors.at("y").all.hi, 1.000001);
}

// Resize cubic overshoots its inputs: not bounded, the note names the node.
TEST(RangeOps, CubicResizeGetsTheWholeRangeAndANote) {
  io::ModelBuilder b;
  b.input("x", DType::kFloat, {1, 1, 4, 4}).output("y", DType::kFloat);
  b.initializer("scales", test::f32({4}, {1, 1, 2, 2}));
  b.node("Resize", {"x", "", "scales"}, {"y"}).attr("mode", "cubic");
  auto model = with_shapes(b);
  ASSERT_TRUE(model.is_ok());
  auto a = analysis::analyze_ranges(model.value(), {});
  ASSERT_TRUE(a.is_ok());
  const analysis::TensorRange& y = a->tensors.at("y");
  EXPECT_TRUE(std::isinf(y.all.lo) && std::isinf(y.all.hi));
  EXPECT_NE(y.note.find("Resize_0"), std::string::npos) << y.note;
}

// Trunc v1 and v2, FloatQuant (every rounding mode, several formats) and QuantAvgPool2d after a Quant.
TEST(RangeOps, QonnxOpsHoldEveryValue) {
  const std::vector<std::string> modes = {"ROUND", "FLOOR", "CEIL", "UP", "DOWN", "HALF_UP", "HALF_DOWN"};
  const std::vector<Box> boxes = {{-5, 3}, {0.01f, 40}, {-300, 300}};
  for (const std::string& mode : modes)
    for (const Box& box : boxes)
      for (int version : {1, 2}) {
        const std::string what = fmt::format("Trunc v{} {} on [{}, {}]", version, mode, box.lo, box.hi);
        io::ModelBuilder b;
        b.import(kQ, version).input("x", DType::kFloat, {2, 3, 4, 4}).output("y", DType::kFloat);
        b.initializer("s", test::f32({1, 3, 1, 1}, {0.25f, 0.5f, 0.125f})).initializer("z", test::f32s(0));
        b.initializer("ib", test::f32s(8)).initializer("ob", test::f32s(4)).initializer("os", test::f32s(1.0f));
        b.node("Quant", {"x", "s", "z", "ib"}, {"q"}, kQ).attr("signed", 1).attr("narrow", 0).attr("rounding_mode", "ROUND");
        if (version == 1) b.node("Trunc", {"q", "s", "z", "ib", "ob"}, {"y"}, kQ).attr("rounding_mode", mode);
        else b.node("Trunc", {"q", "s", "z", "ib", "os", "ob"}, {"y"}, kQ).attr("rounding_mode", mode);
        auto model = with_shapes(b);
        ASSERT_TRUE(model.is_ok()) << model.status().message();
        std::mt19937 rng(static_cast<unsigned>(version));
        auto a = check_sound(model.value(), box.lo, box.hi, range_probe_inputs(rng, {2, 3, 4, 4}, box.lo, box.hi), what);
        expect_checked(a, what);
        for (const std::string& fq_mode : {std::string("ROUND"), std::string("FLOOR"), std::string("CEIL")})
          for (float e_bits : {4.0f, 5.0f})
            for (float m_bits : {3.0f, 2.0f}) {
              const std::string fq = fmt::format("FloatQuant {} e{} m{} on [{}, {}] ({})", fq_mode, e_bits, m_bits, box.lo, box.hi, mode);
              io::ModelBuilder f;
              f.import(kQ, 1).input("x", DType::kFloat, {2, 3, 5}).output("y", DType::kFloat);
              f.initializer("s", test::f32({1, 3, 1}, {1.0f, 0.375f, 3.0f})).initializer("eb", test::f32s(e_bits));
              f.initializer("mb", test::f32s(m_bits)).initializer("bias", test::f32s(e_bits == 4 ? 7.0f : 15.0f));
              f.initializer("mv", test::f32s(200.0f));
              f.node("FloatQuant", {"x", "s", "eb", "mb", "bias", "mv"}, {"y"}, kQ).attr("rounding_mode", fq_mode);
              auto fm = with_shapes(f);
              ASSERT_TRUE(fm.is_ok()) << fm.status().message();
              std::mt19937 frng(3);
              expect_checked(check_sound(fm.value(), box.lo, box.hi, range_probe_inputs(frng, {2, 3, 5}, box.lo, box.hi), fq), fq);
            }
        if (mode != "ROUND" || version != 1) continue;
        io::ModelBuilder p;
        p.import(kQ, 1).input("x", DType::kFloat, {1, 2, 6, 6}).output("y", DType::kFloat);
        p.initializer("s", test::f32s(1.0f)).initializer("z", test::f32s(0)).initializer("ib", test::f32s(4));
        p.node("Quant", {"x", "s", "z", "ib"}, {"q"}, kQ).attr("signed", 0).attr("narrow", 0).attr("rounding_mode", "ROUND");
        p.node("QuantAvgPool2d", {"q"}, {"y"}, kQ).attr("kernel", 3).attr("stride", 2).attr("ibits", 4).attr("obits", 4)
            .attr("signed", 0).attr("data_layout", "NCHW");
        auto pm = with_shapes(p);
        ASSERT_TRUE(pm.is_ok()) << pm.status().message();
        std::mt19937 prng(4);
        expect_checked(check_sound(pm.value(), box.lo, box.hi, range_probe_inputs(prng, {1, 2, 6, 6}, box.lo, box.hi), "QuantAvgPool2d"),
                       "QuantAvgPool2d");
      }
}

}  // namespace
}  // namespace qonnx
