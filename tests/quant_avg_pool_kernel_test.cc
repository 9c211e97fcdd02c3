// QuantAvgPool2d (FINN dialect, qonnx/quant/avg_pool.h): the kernel against an independent integer
// reference (int64 window sums, floor division by 2^shift with qonnx's shift rule) on generated cases
// over signed/unsigned inputs, kernel sizes, strides, ibits/obits and both layouts, extreme sums
// included; the dialect, verifier and schema entries.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/threads.h"
#include "qonnx/quant/avg_pool.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

const char* kGeneral = "qonnx.custom_op.general";

struct PoolCase {
  int64_t kernel = 2, stride = 2, ibits = 4, obits = 4;
  bool is_signed = false;
  std::string layout = "NCHW";  // "" = attribute absent
};

Result<Tensor> pool(const Tensor& x, const PoolCase& p, const std::string& domain = kGeneral) {
  NodeCase c;
  c.op = "QuantAvgPool2d";
  c.domain = domain;
  c.inputs = {x};
  c.attrs = [=](io::NodeBuilder& n) {
    n.attr("kernel", p.kernel).attr("stride", p.stride).attr("ibits", p.ibits).attr("obits", p.obits);
    n.attr("signed", int64_t{p.is_signed ? 1 : 0});
    if (!p.layout.empty()) n.attr("data_layout", p.layout);
  };
  return run1(c);
}

// qonnx's get_accum_size, written out again: bit_length((2^ibits - 1) * kernel^2) (small operands).
int64_t reference_shift(const PoolCase& p) {
  uint64_t v = ((uint64_t{1} << p.ibits) - 1) * static_cast<uint64_t>(p.kernel * p.kernel);
  int64_t bits = 0;
  for (; v != 0; v >>= 1) ++bits;
  return std::max<int64_t>(0, bits - p.obits);
}

int64_t floor_shift(int64_t s, int64_t shift) {
  const int64_t d = int64_t{1} << shift;
  return s >= 0 ? s / d : -((-s + d - 1) / d);
}

// The exact integer result on an NCHW tensor of integer values.
Tensor reference_pool(const Tensor& x, const PoolCase& p) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t oh = (h - p.kernel) / p.stride + 1, ow = (w - p.kernel) / p.stride + 1;
  const int64_t shift = reference_shift(p);
  Tensor y(DType::kFloat, {n, c, oh, ow});
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t col = 0; col < ow; ++col) {
        int64_t sum = 0;
        for (int64_t dy = 0; dy < p.kernel; ++dy)
          for (int64_t dx = 0; dx < p.kernel; ++dx)
            sum += static_cast<int64_t>(xs[plane * h * w + (r * p.stride + dy) * w + col * p.stride + dx]);
        ys[(plane * oh + r) * ow + col] = static_cast<float>(floor_shift(sum, shift));
      }
  return y;
}

// The pooled tensor for `x` given NCHW, in the case's layout (NHWC: transposed in and out).
Result<Tensor> pool_nchw(const Tensor& x, const PoolCase& p) {
  if (p.layout != "NHWC") return pool(x, p);
  QONNX_ASSIGN_OR_RETURN(Tensor y, pool(nchw_to_nhwc(x), p));
  return nhwc_to_nchw(y);
}

TEST(QuantAvgPool2dKernel, AccumulatorBitsFollowQonnx) {
  // bit_length((2^ibits - 1) * k^2), not ibits + ceil(log2(k^2)): they differ for small ibits.
  EXPECT_EQ(quant::avg_pool_accumulator_bits(4, 3), 8);   // 15 * 9 = 135
  EXPECT_EQ(quant::avg_pool_accumulator_bits(1, 3), 4);   // 9; ibits + ceil(log2 9) = 5
  EXPECT_EQ(quant::avg_pool_accumulator_bits(2, 3), 5);   // 27
  EXPECT_EQ(quant::avg_pool_accumulator_bits(3, 3), 6);   // 63; 7 is never an accumulator width for k = 3
  EXPECT_EQ(quant::avg_pool_accumulator_bits(1, 2), 3);   // 4; ibits + ceil(log2 4) = 3
  EXPECT_EQ(quant::avg_pool_accumulator_bits(8, 2), 10);  // 1020
  EXPECT_EQ(quant::avg_pool_accumulator_bits(0, 7), 0);
  EXPECT_EQ(quant::avg_pool_accumulator_bits(5, 1), 5);
  EXPECT_EQ(quant::avg_pool_accumulator_bits(64, 1 << 15), 94);  // (2^64 - 1) * 2^30
  quant::AvgPoolParams p;
  p.kernel = 3, p.ibits = 4, p.obits = 4;
  EXPECT_EQ(quant::avg_pool_shift(p), 4);
  p.obits = 9;
  EXPECT_EQ(quant::avg_pool_shift(p), 0);  // never negative
}

// Every combination of sign, kernel, stride, ibits and three obits, on random values of the ibits
// range and on the all-largest and all-smallest tensors (the extreme sums), in both layouts.
TEST(QuantAvgPool2dKernel, GeneratedCasesMatchTheExactIntegerSum) {
  std::mt19937 rng(24);
  int checked = 0;
  for (bool is_signed : {false, true})
    for (int64_t kernel : {1, 2, 3, 4, 5})
      for (int64_t stride : {1, 2, 3})
        for (int64_t ibits : {1, 2, 3, 4, 8, 16, 24}) {
          PoolCase p;
          p.kernel = kernel, p.stride = stride, p.ibits = ibits, p.is_signed = is_signed;
          const int64_t acc = quant::avg_pool_accumulator_bits(ibits, kernel);
          const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(ibits - 1)) : 0.0;
          const double hi = is_signed ? std::ldexp(1.0, static_cast<int>(ibits - 1)) - 1 : std::ldexp(1.0, static_cast<int>(ibits)) - 1;
          const int64_t h = kernel + static_cast<int64_t>(rng() % 6), w = kernel + static_cast<int64_t>(rng() % 6);
          std::uniform_int_distribution<int64_t> value(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
          Tensor random(DType::kFloat, {2, 3, h, w}), largest(DType::kFloat, {1, 2, h, w}), smallest(DType::kFloat, {1, 2, h, w});
          for (int64_t i = 0; i < random.numel(); ++i) random.data<float>()[i] = static_cast<float>(value(rng));
          for (int64_t i = 0; i < largest.numel(); ++i) largest.data<float>()[i] = static_cast<float>(hi);
          for (int64_t i = 0; i < smallest.numel(); ++i) smallest.data<float>()[i] = static_cast<float>(lo);
          for (int64_t obits : {int64_t{1}, std::max<int64_t>(1, acc / 2), acc + 2}) {
            p.obits = obits;
            p.layout = (checked % 2 == 0) ? "NCHW" : "NHWC";
            SCOPED_TRACE(testing::Message() << "signed " << is_signed << " k " << kernel << " s " << stride << " ibits "
                                            << ibits << " obits " << obits << " " << p.layout);
            for (const Tensor* x : {&random, &largest, &smallest}) {
              auto got = pool_nchw(*x, p);
              ASSERT_TRUE(got.is_ok()) << got.status().to_string();
              const Tensor want = reference_pool(*x, p);
              ASSERT_TRUE(got->identical(want)) << "first value " << got->data<float>()[0] << " want " << want.data<float>()[0];
            }
            ++checked;
          }
        }
  EXPECT_EQ(checked, 2 * 5 * 3 * 7 * 3);
}

// Rows split over threads give the same bits as one thread (each row is summed on its own).
TEST(QuantAvgPool2dKernel, ThreadsGiveTheSameResult) {
  struct Restore {
    ~Restore() {
      exec::set_threads(1);
      exec::set_min_work_per_thread(exec::kDefaultMinWorkPerThread);
    }
  } restore;
  exec::set_min_work_per_thread(1);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> value(-128, 127);
  Tensor x(DType::kFloat, {2, 5, 13, 11});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(value(rng));
  PoolCase p;
  p.kernel = 3, p.stride = 2, p.ibits = 8, p.obits = 6, p.is_signed = true;
  const Tensor want = reference_pool(x, p);
  for (int threads : {1, 3, 4}) {
    exec::set_threads(threads);
    for (const char* layout : {"NCHW", "NHWC"}) {
      p.layout = layout;
      auto got = pool_nchw(x, p);
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      EXPECT_TRUE(got->identical(want)) << threads << " threads, " << layout;
    }
  }
}

TEST(QuantAvgPool2dKernel, SumsBeyondFloat32AreExact) {
  // Nine values 2^24 - 1 and -2^24 + 1 (k = 3): sums of 1.5e8, where a float32 sum rounds, and where
  // qonnx's float AveragePool path is off by one already from 6.5e6 on.
  PoolCase p;
  p.kernel = 3, p.stride = 3, p.ibits = 24, p.obits = 28, p.is_signed = true;
  Tensor x = f32({1, 1, 3, 6}, {16777215, 16777215, 16777215, -16777215, -16777215, -16777215,
                                16777215, 16777215, 16777215, -16777215, -16777215, -16777215,
                                16777215, 16777215, 16777213, -16777215, -16777215, -16777213});
  // acc = bit_length((2^24 - 1) * 9) = 28: no shift; the sums are 9 * (2^24 - 1) - 2 and its negation.
  auto got = pool(x, p);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(values_f32(got.value()), (std::vector<float>{150994933.0f, -150994933.0f}));
  EXPECT_TRUE(got->identical(reference_pool(x, p)));
}

TEST(QuantAvgPool2dKernel, RoundsTheSumNotEachInput) {
  // 4 * 0.625 = 2.5 -> 2 (half to even); rounding each input would give 4. -0.3 rounds to -0.
  PoolCase p;
  p.kernel = 2, p.stride = 2, p.ibits = 2, p.obits = 8;
  auto got = pool(f32({1, 1, 2, 4}, {0.625f, 0.625f, -0.1f, -0.1f, 0.625f, 0.625f, -0.1f, 0.0f}), p);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(values_f32(got.value()), (std::vector<float>{2.0f, 0.0f}));
  EXPECT_TRUE(std::signbit(got->data<float>()[1]));
  // Near-integers (a Div by a scale in front) pool as the integers: 3 * 0.1f / 0.1f is not exactly 3.
  p.obits = 2;  // acc 4: shift 2
  const float e = std::nextafter(3.0f, 4.0f), f = std::nextafter(3.0f, 2.0f);
  got = pool(f32({1, 1, 2, 2}, {e, f, e, f}), p);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(values_f32(got.value()), (std::vector<float>{3.0f}));  // floor(12 / 4)
}

TEST(QuantAvgPool2dKernel, FloorShiftOfNegativeSums) {
  // Sums -1, -4, -5 with shift 2 (ibits 2, k 2: acc 4, obits 2): floor(-0.25) = -1, -1, floor(-1.25) = -2.
  PoolCase p;
  p.kernel = 2, p.stride = 2, p.ibits = 2, p.obits = 2, p.is_signed = true;
  auto got = pool(f32({1, 1, 2, 6}, {-1, 0, -1, -1, -2, -1, 0, 0, -1, -1, -1, -1}), p);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(values_f32(got.value()), (std::vector<float>{-1.0f, -1.0f, -2.0f}));
}

TEST(QuantAvgPool2dKernel, NanAndInfinityPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  PoolCase p;
  p.kernel = 1, p.stride = 1, p.ibits = 4, p.obits = 2;  // shift 2
  auto got = pool(f32({1, 1, 1, 3}, {std::nanf(""), inf, -inf}), p);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_TRUE(std::isnan(got->data<float>()[0]));
  EXPECT_EQ(got->data<float>()[1], inf);
  EXPECT_EQ(got->data<float>()[2], -inf);
}

TEST(QuantAvgPool2dKernel, DefaultsAndEveryDomainSpelling) {
  // No attributes: kernel 1, stride 1, ibits 1, obits 1 (shift 0), NCHW.
  for (const std::string& d : dialect::general_domain_spellings()) {
    NodeCase c;
    c.op = "QuantAvgPool2d";
    c.domain = d;
    c.inputs = {f32({1, 1, 1, 2}, {1, 0})};
    auto got = run1(c);
    ASSERT_TRUE(got.is_ok()) << d << ": " << got.status().to_string();
    EXPECT_EQ(values_f32(got.value()), (std::vector<float>{1, 0})) << d;
    EXPECT_EQ(dialect::classify(d, "QuantAvgPool2d"), dialect::Op::kQuantAvgPool2d) << d;
  }
  EXPECT_EQ(dialect::classify("", "QuantAvgPool2d"), dialect::Op::kNone);
}

TEST(QuantAvgPool2dKernel, ErrorsNameTheProblem) {
  PoolCase p;
  auto expect = [](const Result<Tensor>& r, Code code, const std::string& fragment) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(fragment), std::string::npos) << r.status().to_string();
  };
  expect(pool(f32({1, 4, 4}, {}), p), Code::kInvalidModel, "must be 4-D");
  expect(pool(f32({1, 1, 1, 4}, {}), p), Code::kInvalidModel, "smaller than the 2x2 kernel");
  expect(pool(i32({1, 1, 2, 2}, {}), p), Code::kInvalidModel, "is int32, which QuantAvgPool2d type parameter T");
  PoolCase bad = p;
  bad.kernel = 0;
  expect(pool(f32({1, 1, 2, 2}, {}), bad), Code::kInvalidModel, "'kernel'");
  bad = p;
  bad.obits = 0;
  expect(pool(f32({1, 1, 2, 2}, {}), bad), Code::kInvalidModel, "'obits'");
  bad = p;
  bad.ibits = 65;
  expect(pool(f32({1, 1, 2, 2}, {}), bad), Code::kInvalidModel, "'ibits'");
  bad = p;
  bad.layout = "NCWH";
  expect(pool(f32({1, 1, 2, 2}, {}), bad), Code::kInvalidModel, "NCHW or NHWC");
}

TEST(QuantAvgPool2dKernel, SchemaInfersThePooledShapeInBothLayouts) {
  for (const std::string& layout : {"NCHW", "NHWC"}) {
    io::ModelBuilder b(13);
    b.import(kGeneral, 1);
    const bool nhwc = layout == "NHWC";
    b.input("x", DType::kFloat, nhwc ? Dims{2, 7, 9, 3} : Dims{2, 3, 7, 9});
    b.output("y", DType::kUndefined);
    b.node("QuantAvgPool2d", {"x"}, {"pooled"}, kGeneral).attr("kernel", int64_t{3}).attr("stride", int64_t{2}).attr("data_layout", layout);
    b.node("Identity", {"pooled"}, {"y"});
    auto m = b.build();
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    auto changed = run_passes(m.value(), "infer-shapes");
    ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
    const ir::Value* y = m->graph().find_value("pooled");
    ASSERT_NE(y, nullptr);
    ASSERT_TRUE(m->graph().dims_of(y).has_value()) << layout;
    EXPECT_EQ(*m->graph().dims_of(y), nhwc ? (Dims{2, 3, 4, 3}) : (Dims{2, 3, 3, 4})) << layout;
    EXPECT_EQ(m->graph().type_of(y)->dtype, DType::kFloat);
  }
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("QuantAvgPool2d", 1, "finn.custom_op.general"), nullptr);
}

TEST(QuantAvgPool2dKernel, VerifierRejectsUnknownAttributesAndLayouts) {
  io::ModelBuilder b(13);
  b.import(kGeneral, 1);
  b.input("x", DType::kFloat, {1, 1, 2, 2});
  b.output("y", DType::kFloat);
  b.node("QuantAvgPool2d", {"x"}, {"y"}, kGeneral).attr("data_layout", "NWHC");
  auto m = b.build();
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().to_string().find("must be NCHW or NHWC"), std::string::npos) << m.status().to_string();
  io::ModelBuilder b2(13);
  b2.import(kGeneral, 1);
  b2.input("x", DType::kFloat, {1, 1, 2, 2});
  b2.output("y", DType::kFloat);
  b2.node("QuantAvgPool2d", {"x"}, {"y"}, kGeneral).attr("kernel_shape", std::vector<int64_t>{2, 2});
  auto m2 = b2.build();
  ASSERT_FALSE(m2.is_ok());
  EXPECT_NE(m2.status().to_string().find("no such attribute"), std::string::npos) << m2.status().to_string();
}

}  // namespace
}  // namespace qonnx::test
