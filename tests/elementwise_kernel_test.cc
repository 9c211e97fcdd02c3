// Elementwise, logic, activation, softmax and cast kernels: broadcasting, dtype errors, integer
// edge cases and a few exact values.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "kernels/isa/isa.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(ElementwiseKernel, AddBroadcastsLikeNumpy) {
  Tensor z = run_ok("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  EXPECT_EQ(z.dims(), (Dims{2, 3}));
  EXPECT_EQ(values_f32(z), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  Tensor outer = run_ok("Mul", {f32({2, 1}, {1, 2}), f32({1, 3}, {1, 10, 100})});
  EXPECT_EQ(values_f32(outer), (std::vector<float>{1, 10, 100, 2, 20, 200}));
  Tensor empty = run_ok("Sub", {f32({0, 3}, {}), f32({3}, {1, 2, 3})});
  EXPECT_EQ(empty.dims(), (Dims{0, 3}));
}

TEST(ElementwiseKernel, BroadcastAndDtypeErrors) {
  expect_error(run_op("Add", {f32({2, 3}, {}), f32({2}, {})}), Code::kInvalidModel, "does not broadcast");
  expect_error(run_op("Add", {f32({2}, {}), i32({2}, {})}), Code::kInvalidModel, "must be one type");
  expect_error(run_op("Add", {b8({2}, {}), b8({2}, {})}), Code::kInvalidModel, "is bool, which Add type parameter T");
  expect_error(run_op("Add", {f32({2}, {})}), Code::kInvalidModel, "required");
  expect_error(run_op("Where", {f32({2}, {}), f32({2}, {}), f32({2}, {})}), Code::kInvalidModel, "bool");
  expect_error(run_op("Sqrt", {i32({2}, {4, 9})}), Code::kInvalidModel, "is int32, which Sqrt type parameter T");
  expect_error(run_op("And", {i32({1}, {1}), i32({1}, {1})}), Code::kInvalidModel, "is int32, which And type parameter T");
  expect_error(run_op("PRelu", {f32({3}, {}), f32({2, 3}, {})}), Code::kInvalidModel, "does not broadcast to X");
  // An outer product too large to allocate is refused, not attempted.
  const int64_t n = int64_t{1} << 18;
  expect_error(run_op("Add", {f32({n, 1}, {}), f32({1, n}, {})}), Code::kInvalidModel, "too large");
}

TEST(ElementwiseKernel, LegacyBroadcastBeforeOpset7) {
  // broadcast=1 with axis=1: B (3,) lines up with A's dim 1, not with the trailing dim.
  auto attrs = [](io::NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 1); };
  Tensor z = run_ok("Add", {f32({2, 3, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), f32({3}, {1, 2, 3})}, attrs, 6);
  EXPECT_EQ(values_f32(z), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  expect_error(run_op("Add", {f32({2, 3}, {}), f32({2, 3}, {})}, attrs, 6), Code::kInvalidModel, "at axis 1");
  expect_error(run_op("Add", {f32({2, 3}, {}), f32({3}, {})}, [](io::NodeBuilder& n) { n.attr("broadcast", 1).attr("axis", 0); }, 6),
               Code::kInvalidModel, "does not broadcast");
  // PRelu before 7: a 1-D slope is per channel (axis 1).
  EXPECT_EQ(values_f32(run_ok("PRelu", {f32({1, 2, 2}, {-1, -1, -1, -1}), f32({2}, {0.5f, 2})}, nullptr, 6)),
            (std::vector<float>{-0.5f, -0.5f, -2, -2}));
}

TEST(ElementwiseKernel, IntegerArithmeticWrapsAndDivisionByZeroGivesZero) {
  // 8-bit Add/Mul exist from opset 14.
  EXPECT_EQ(values<int8_t>(run_ok("Add", {i8({2}, {100, -128}), i8({2}, {100, -1})}, nullptr, 14)), (std::vector<int8_t>{-56, 127}));
  const int32_t lo = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(values<int32_t>(run_ok("Div", {i32({4}, {7, -7, lo, 5}), i32({4}, {2, 2, -1, 0})})),
            (std::vector<int32_t>{3, -3, lo, 0}));
  EXPECT_EQ(values<uint8_t>(run_ok("Mul", {u8({1}, {200}), u8({1}, {2})}, nullptr, 14)), (std::vector<uint8_t>{144}));
  EXPECT_EQ(values<int32_t>(run_ok("Neg", {i32({2}, {lo, 3})})), (std::vector<int32_t>{lo, -3}));
  EXPECT_EQ(values<int32_t>(run_ok("Abs", {i32({2}, {lo, -3})})), (std::vector<int32_t>{lo, 3}));
}

TEST(ElementwiseKernel, ModSignConventions) {
  Tensor x = i32({5}, {-7, 7, 7, -7, 5}), y = i32({5}, {3, -3, 3, -3, 0});
  EXPECT_EQ(values<int32_t>(run_ok("Mod", {x, y})), (std::vector<int32_t>{2, -2, 1, -1, 0}));
  auto fmod = [](io::NodeBuilder& n) { n.attr("fmod", 1); };
  EXPECT_EQ(values<int32_t>(run_ok("Mod", {x, y}, fmod)), (std::vector<int32_t>{-1, 1, 1, -1, 0}));
  EXPECT_EQ(values_f32(run_ok("Mod", {f32({2}, {-4.5f, 4.5f}), f32({2}, {2, -2})}, fmod)),
            (std::vector<float>{-0.5f, 0.5f}));
  expect_error(run_op("Mod", {f32({1}, {1}), f32({1}, {1})}), Code::kInvalidModel, "fmod=1");
}

TEST(ElementwiseKernel, PowMixedTypes) {
  // float base, int exponent -> float; int base, float exponent -> int (truncated); int ^ int exact.
  EXPECT_EQ(values_f32(run_ok("Pow", {f32({3}, {2, -2, 0.5f}), i64({3}, {3, 3, -1})})), (std::vector<float>{8, -8, 2}));
  EXPECT_EQ(values<int64_t>(run_ok("Pow", {i64({3}, {2, 9, -8}), f32({3}, {0.5f, 0.5f, 2})})),
            (std::vector<int64_t>{1, 3, 64}));
  EXPECT_EQ(values<int32_t>(run_ok("Pow", {i32({4}, {3, -2, 2, -1}), i32({4}, {4, 3, -1, -3})})),
            (std::vector<int32_t>{81, -8, 0, -1}));
  EXPECT_EQ(values_f32(run_ok("Pow", {f32({2}, {4, 2}), f32s(0.5f)})), (std::vector<float>{2, std::sqrt(2.0f)}));
}

TEST(ElementwiseKernel, RoundIsHalfToEven) {
  Tensor r = run_ok("Round", {f32({9}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f, -0.0f})});
  EXPECT_EQ(values_f32(r), (std::vector<float>{0, 2, 2, -0.0f, -2, -2, 2, 3, -0.0f}));
  Tensor d = run_ok("Round", {make<double>(DType::kDouble, {2}, {4.5, -3.5})});
  EXPECT_EQ(values<double>(d), (std::vector<double>{4, -4}));
}

TEST(ElementwiseKernel, VariadicMaxMinSumMean) {
  Tensor a = f32({1}, {1}), b = f32({2, 1}, {5, -5}), c = f32({1, 3}, {0, 2, kNaN});
  Tensor mx = run_ok("Max", {a, b, c});
  EXPECT_EQ(mx.dims(), (Dims{2, 3}));
  auto v = values_f32(mx);
  EXPECT_EQ(v[0], 5);
  EXPECT_EQ(v[4], 2);
  EXPECT_TRUE(std::isnan(v[2]) && std::isnan(v[5]));  // NaN propagates like numpy.maximum
  EXPECT_EQ(values_f32(run_ok("Sum", {a, b, f32({1, 3}, {0, 1, 2})})), (std::vector<float>{6, 7, 8, -4, -3, -2}));
  EXPECT_EQ(values_f32(run_ok("Mean", {f32({2}, {1, 2}), f32({2}, {2, 4}), f32({2}, {3, 0})})),
            (std::vector<float>{2, 2}));
  EXPECT_EQ(values<int32_t>(run_ok("Min", {i32({2}, {3, -1})})), (std::vector<int32_t>{3, -1}));
  expect_error(run_op("Mean", {i32({1}, {1}), i32({1}, {1})}), Code::kInvalidModel, "is int32, which Mean type parameter T");
  expect_error(run_op("Max", {f32({2}, {}), f32({3}, {})}), Code::kInvalidModel, "input #1");
}

TEST(ElementwiseKernel, WhereBroadcastsThreeInputs) {
  Tensor z = run_ok("Where", {b8({2, 1}, {true, false}), i64({3}, {1, 2, 3}), i64({1}, {-1})});
  EXPECT_EQ(z.dims(), (Dims{2, 3}));
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  Tensor sx(DType::kString, {2}), sy(DType::kString, {});
  sx.strings() = {"a", "b"};
  sy.strings() = {"z"};
  Tensor s = run_ok("Where", {b8({2}, {false, true}), sx, sy});
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"z", "b"}));
}

TEST(ElementwiseKernel, ComparisonsAndLogic) {
  Tensor x = f32({4}, {1, kNaN, 3, -kInf}), y = f32({1}, {1});
  EXPECT_EQ(bools(run_ok("Equal", {x, y})), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bools(run_ok("Less", {x, y})), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(bools(run_ok("GreaterOrEqual", {x, y}, nullptr, 16)), (std::vector<bool>{true, false, true, false}));
  Tensor p = b8({4}, {false, false, true, true}), q = b8({4}, {false, true, false, true});
  EXPECT_EQ(bools(run_ok("Xor", {p, q})), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(bools(run_ok("Not", {p})), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(bools(run_ok("IsNaN", {x})), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(bools(run_ok("IsInf", {x}, [](io::NodeBuilder& n) { n.attr("detect_negative", 0); })),
            (std::vector<bool>{false, false, false, false}));
}

TEST(ElementwiseKernel, BitShift) {
  auto left = [](io::NodeBuilder& n) { n.attr("direction", "LEFT"); };
  EXPECT_EQ(values<uint8_t>(run_ok("BitShift", {u8({3}, {1, 255, 1}), u8({3}, {3, 1, 8})}, left)),
            (std::vector<uint8_t>{8, 254, 0}));
  expect_error(run_op("BitShift", {u8({1}, {1}), u8({1}, {1})}, [](io::NodeBuilder& n) { n.attr("direction", "UP"); }),
               Code::kInvalidModel, "direction");
  expect_error(run_op("BitShift", {i32({1}, {1}), i32({1}, {1})}, left), Code::kInvalidModel, "is int32, which BitShift");
}

TEST(ElementwiseKernel, ClipAttributesAndInputs) {
  Tensor x = f32({4}, {-2, 0.5f, 3, kNaN});
  auto attrs = [](io::NodeBuilder& n) { n.attr("min", -1.0f).attr("max", 1.0f); };
  auto v6 = values_f32(run_ok("Clip", {x}, attrs, 6));
  EXPECT_EQ((std::vector<float>(v6.begin(), v6.begin() + 3)), (std::vector<float>{-1, 0.5f, 1}));
  EXPECT_TRUE(std::isnan(v6[3]));
  EXPECT_EQ(values_f32(run_ok("Clip", {f32({3}, {-2, 0.5f, 3}), Tensor(), f32s(1)})), (std::vector<float>{-2, 0.5f, 1}));
  // min > max gives max everywhere.
  EXPECT_EQ(values_f32(run_ok("Clip", {f32({2}, {-2, 3}), f32s(2), f32s(1)})), (std::vector<float>{1, 1}));
  EXPECT_EQ(values<int8_t>(run_ok("Clip", {i8({3}, {-100, 5, 100}), i8({}, {-10}), i8({}, {10})})),
            (std::vector<int8_t>{-10, 5, 10}));
  expect_error(run_op("Clip", {x, f32({2}, {0, 1})}), Code::kInvalidModel, "scalar");
  expect_error(run_op("Clip", {x, i32({}, {0})}), Code::kInvalidModel, "must be one type");
}

TEST(ElementwiseKernel, ActivationValues) {
  Tensor x = f32({3}, {-1, 0, 2});
  EXPECT_EQ(values_f32(run_ok("Relu", {x})), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(values<int32_t>(run_ok("Relu", {i32({2}, {-3, 3})}, nullptr, 14)), (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(values_f32(run_ok("LeakyRelu", {x}, [](io::NodeBuilder& n) { n.attr("alpha", 0.5f); })),
            (std::vector<float>{-0.5f, 0, 2}));
  EXPECT_EQ(values_f32(run_ok("HardSigmoid", {x})), (std::vector<float>{0.2f * -1.0f + 0.5f, 0.5f, 0.2f * 2.0f + 0.5f}));
  EXPECT_EQ(values_f32(run_ok("ThresholdedRelu", {x}, nullptr, 10)), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(values_f32(run_ok("PRelu", {f32({2, 2}, {-1, -2, 3, -4}), f32({2}, {0.5f, 2})})),
            (std::vector<float>{-0.5f, -4, 3, -8}));
  EXPECT_EQ(values_f32(run_ok("Shrink", {f32({3}, {-2, 0.2f, 2})}, [](io::NodeBuilder& n) { n.attr("bias", 1.0f); })),
            (std::vector<float>{-1, 0, 1}));
  auto sp = values_f32(run_ok("Softplus", {f32({2}, {100, -100})}));
  EXPECT_FLOAT_EQ(sp[0], 100.0f);  // no overflow
  EXPECT_NEAR(sp[1], 0.0f, 1e-30f);
}

TEST(ElementwiseKernel, SoftmaxAxisSemanticsChangeAt13) {
  Tensor x = f32({1, 2, 2}, {0, 0, std::log(3.0f), 0});
  // Opset 13: over axis 1 only -> columns (0, log3) and (0, 0).
  auto v13 = values_f32(run_ok("Softmax", {x}, [](io::NodeBuilder& n) { n.attr("axis", 1); }));
  EXPECT_NEAR(v13[0], 0.25f, 1e-6f);
  EXPECT_NEAR(v13[2], 0.75f, 1e-6f);
  EXPECT_NEAR(v13[1], 0.5f, 1e-6f);
  // Opset 11: coerced to 2-D at axis 1 -> one row of four values (1, 1, 3, 1) / 6.
  auto v11 = values_f32(run_ok("Softmax", {x}, [](io::NodeBuilder& n) { n.attr("axis", 1); }, 11));
  EXPECT_NEAR(v11[0], 1.0f / 6, 1e-6f);
  EXPECT_NEAR(v11[2], 0.5f, 1e-6f);
  auto lv = values_f32(run_ok("LogSoftmax", {f32({2}, {1000, 1000})}));
  EXPECT_NEAR(lv[0], -std::log(2.0f), 1e-6f);
  EXPECT_EQ(values_f32(run_ok("Hardmax", {f32({2, 3}, {1, 3, 3, 2, 0, 1})})), (std::vector<float>{0, 1, 0, 1, 0, 0}));
  expect_error(run_op("Softmax", {x}, [](io::NodeBuilder& n) { n.attr("axis", 3); }), Code::kInvalidModel, "axis");
}

// Softmax and LogSoftmax rows on the AVX2 + FMA path give the portable path's bits: every row length
// up to 41 (full vectors and tails), values that underflow, a NaN, an infinity, a large row maximum.
TEST(ElementwiseKernel, SoftmaxSimdPathGivesThePortableBits) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> spread(-120.0f, 30.0f);
  for (int64_t n = 1; n <= 41; ++n) {
    std::vector<float> v(static_cast<size_t>(3 * n));
    for (float& x : v) x = spread(rng);
    if (n > 5) v[3] = kNaN, v[static_cast<size_t>(n + 2)] = -kInf, v[static_cast<size_t>(2 * n + 1)] = 1e30f;
    const Tensor x = f32({3, n}, v);
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      const Tensor fast = run_ok(op, {x});
      const auto previous = kernels::isa::use(kernels::isa::Family::kFloat, kernels::isa::Isa::kPortable);
      const Tensor portable = run_ok(op, {x});
      kernels::isa::use(kernels::isa::Family::kFloat, previous);
      EXPECT_EQ(std::memcmp(fast.data<float>(), portable.data<float>(), fast.nbytes()), 0) << op << " n " << n;
    }
  }
}

// Sigmoid, Tanh, Erf and both Gelus (onnxruntime's fused multiply-add approximations) on the FMA loop
// give the portable loop's bits, over both branches of each approximation, its clamps and NaN.
TEST(ElementwiseKernel, FmaApproximationsGiveThePortableBits) {
  std::vector<float> v;
  for (float x = -30.0f; x <= 30.0f; x += 0.0137f) v.push_back(x);
  for (float x : {0.0f, -0.0f, 0.921875f, -0.921875f, 3.925f, 9.0f, -9.0f, 18.0f, -18.0f, 1e30f, -1e30f, kInf, -kInf, kNaN})
    v.push_back(x);
  const Tensor x = f32({static_cast<int64_t>(v.size())}, v);
  auto gelu = [](const char* approximate) { return [approximate](io::NodeBuilder& n) { n.attr("approximate", std::string(approximate)); }; };
  const std::vector<std::pair<std::string, Attrs>> ops = {
      {"Sigmoid", nullptr}, {"Tanh", nullptr}, {"Erf", nullptr}, {"Gelu", gelu("none")}, {"Gelu", gelu("tanh")}};
  for (const auto& [op, attrs] : ops) {
    const Tensor fast = run_ok(op, {x}, attrs, 20);
    const auto previous = kernels::isa::use(kernels::isa::Family::kFloat, kernels::isa::Isa::kPortable);
    const Tensor portable = run_ok(op, {x}, attrs, 20);
    kernels::isa::use(kernels::isa::Family::kFloat, previous);
    EXPECT_EQ(std::memcmp(fast.data<float>(), portable.data<float>(), fast.nbytes()), 0) << op;
  }
}

TEST(ElementwiseKernel, CastNumbersAndStrings) {
  auto to = [](DType t) { return [t](io::NodeBuilder& n) { n.attr("to", static_cast<int64_t>(t)); }; };
  EXPECT_EQ(values<int8_t>(run_ok("Cast", {f32({4}, {1.9f, -1.9f, 1000, kNaN})}, to(DType::kInt8))),
            (std::vector<int8_t>{1, -1, 127, 0}));
  Tensor s = run_ok("Cast", {f32({4}, {0.5f, 0.1f, kNaN, -kInf})}, to(DType::kString));
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"0.5", "0.1", "NaN", "-INF"}));
  Tensor text(DType::kString, {4});
  text.strings() = {"1e-5", "+INF", "nan", "-2.5"};
  auto f = values_f32(run_ok("Cast", {text}, to(DType::kFloat)));
  EXPECT_EQ(f[0], 1e-5f);
  EXPECT_EQ(f[1], kInf);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], -2.5f);
  Tensor big(DType::kString, {1});
  big.strings() = {"9007199254740993"};
  EXPECT_EQ(values<int64_t>(run_ok("Cast", {big}, to(DType::kInt64))), (std::vector<int64_t>{9007199254740993}));
  Tensor bad(DType::kString, {1});
  bad.strings() = {"hello"};
  expect_error(run_op("Cast", {bad}, to(DType::kFloat)), Code::kInvalidModel, "not a number");
  expect_error(run_op("Cast", {f32({1}, {1})}), Code::kInvalidModel, "'to'");
  EXPECT_EQ(values<double>(run_ok("CastLike", {i32({2}, {3, -4}), make<double>(DType::kDouble, {}, {0})}, nullptr, 15)),
            (std::vector<double>{3, -4}));
}

// exec::cast_tensor (shared by kernels and passes) reports what it cannot convert instead of throwing.
TEST(CastTensor, StringsAndComplexAreUnsupportedErrors) {
  const auto s = exec::cast_tensor(strings({1}, {"1"}), DType::kFloat);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::kUnsupported);
  EXPECT_EQ(s.status().message(), "cannot cast string to float");
  const auto c = exec::cast_tensor(f32({1}, {1}), DType::kComplex64);
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), Code::kUnsupported);
  auto same = exec::cast_tensor(strings({1}, {"1"}), DType::kString);
  ASSERT_TRUE(same.is_ok());
  EXPECT_EQ(same->strings(), std::vector<std::string>{"1"});
}

TEST(ElementwiseKernel, DropoutIsIdentityAtInference) {
  Tensor x = f32({2}, {1, 2});
  auto r = run_op("Dropout", {x, f32s(0.3f)}, nullptr, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(bools(r.value()[1]), (std::vector<bool>{true, true}));
  expect_error(run_op("Dropout", {x, f32s(0.3f), b8({}, {true})}), Code::kUnsupported, "training");
  EXPECT_EQ(values_f32(run_ok("Dropout", {x, f32s(0.0f), b8({}, {true})})), (std::vector<float>{1, 2}));
}

// Each Dropout version range is its own kernel: the mask is ones of X's type before 10 and bool from
// 10; before 12 a second input is not a ratio (the schema allows only one).
TEST(ElementwiseKernel, DropoutMaskTypeByVersion) {
  const Tensor x = f32({3}, {1, -2, 3});
  auto v7 = run_op("Dropout", {x}, nullptr, 7, 2);
  ASSERT_TRUE(v7.is_ok()) << v7.status().to_string();
  EXPECT_EQ(v7.value()[1].dtype(), DType::kFloat);
  EXPECT_EQ(values_f32(v7.value()[1]), (std::vector<float>{1, 1, 1}));
  auto v10 = run_op("Dropout", {x}, nullptr, 10, 2);
  ASSERT_TRUE(v10.is_ok()) << v10.status().to_string();
  EXPECT_EQ(bools(v10.value()[1]), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(values_f32(v10.value()[0]), (std::vector<float>{1, -2, 3}));
}

// Clip 6-10 reads min/max attributes and ignores inputs; from 11 it reads the inputs only.
TEST(ElementwiseKernel, ClipBoundsComeFromAttributesOrInputsByVersion) {
  const Tensor x = f32({3}, {-5, 0.5f, 5});
  auto attrs = [](io::NodeBuilder& n) { n.attr("min", 0.0f).attr("max", 1.0f); };
  EXPECT_EQ(values_f32(run_ok("Clip", {x}, attrs, 10)), (std::vector<float>{0, 0.5f, 1}));
  EXPECT_EQ(values_f32(run_ok("Clip", {x}, nullptr, 6)), (std::vector<float>{-5, 0.5f, 5}));
  EXPECT_EQ(values_f32(run_ok("Clip", {x, f32s(-1), f32s(2)}, nullptr, 12)), (std::vector<float>{-1, 0.5f, 2}));
  expect_error(run_op("Clip", {i32({1}, {1})}, attrs, 10), Code::kInvalidModel, "int32");
}

}  // namespace
}  // namespace qonnx::test
