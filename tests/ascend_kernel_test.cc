// Ascend TransQuantParamV2 and QuantBatchMatMul against SEMANTICS.md section 4.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "qonnx/dialect/target_ops.h"
#include "qonnx/kernels/ascend.h"
#include "support/test_util.h"

namespace qonnx::test {
namespace {

namespace ascend = kernels::ascend;

uint32_t bits_of(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// --- the word ------------------------------------------------------------------------------------

TEST(AscendWord, WorkedExamples) {
  EXPECT_EQ(ascend::encode_trans_quant_param(1.0f, std::nullopt, 0), 0x40003F800000u);
  EXPECT_EQ(ascend::encode_trans_quant_param(1.0f, std::nullopt, 1), 0x40003F800000u);
  ASSERT_EQ(bits_of(0.3f), 0x3E99999Au);
  EXPECT_EQ(ascend::encode_trans_quant_param(0.3f, std::nullopt, 0), 0x40003E998000u);
  EXPECT_EQ(ascend::encode_trans_quant_param(0.3f, std::nullopt, 1), 0x40003E99A000u);
  EXPECT_EQ(ascend::encode_trans_quant_param(1.0f, -1.5f, 0), 0x7FC03F800000u);  // rne(-1.5) = -2
}

TEST(AscendWord, OffsetField) {
  EXPECT_EQ(ascend::trans_quant_offset(2.5f), 2);
  EXPECT_EQ(ascend::trans_quant_offset(-2.5f), -2);
  EXPECT_EQ(ascend::trans_quant_offset(3.5f), 4);
  EXPECT_EQ(ascend::trans_quant_offset(-0.5f), 0);
  EXPECT_EQ(ascend::trans_quant_offset(255.5f), 255);
  EXPECT_EQ(ascend::trans_quant_offset(300.0f), 255);
  EXPECT_EQ(ascend::trans_quant_offset(-1e30f), -256);
  for (int off = -256; off <= 255; ++off) {
    const uint64_t w = ascend::encode_trans_quant_param(0.25f, static_cast<float>(off), 1);
    EXPECT_GE(w, uint64_t{1} << 46);
    EXPECT_LT(w, uint64_t{1} << 47);
    const auto p = ascend::decode_trans_quant_param(w);
    EXPECT_EQ(p.offset, off);
    EXPECT_EQ(p.scale, 0.25f);
    EXPECT_TRUE(p.is_signed);
  }
}

TEST(AscendWord, Fp19SpecialValues) {
  using ascend::fp19_round_half_even;
  EXPECT_EQ(fp19_round_half_even(0x00000000u), 0x00000000u);
  EXPECT_EQ(fp19_round_half_even(0x80000000u), 0x80000000u);
  EXPECT_EQ(fp19_round_half_even(0x007FFFFFu), 0x00000000u);  // largest subnormal -> +0
  EXPECT_EQ(fp19_round_half_even(0x80000001u), 0x80000000u);  // subnormal -> -0
  EXPECT_EQ(fp19_round_half_even(0x7F7FFFFFu), 0x7F800000u);  // FLT_MAX carries to +inf
  EXPECT_EQ(fp19_round_half_even(0xFF7FFFFFu), 0xFF800000u);  // -FLT_MAX carries to -inf
  EXPECT_EQ(fp19_round_half_even(0x3F800FFFu), 0x3F800000u);  // below half: down
  EXPECT_EQ(fp19_round_half_even(0x3F801000u), 0x3F800000u);  // half, even kept part: down
  EXPECT_EQ(fp19_round_half_even(0x3F803000u), 0x3F804000u);  // half, odd kept part: up
  EXPECT_EQ(fp19_round_half_even(0x3F801001u), 0x3F802000u);  // above half: up
  EXPECT_EQ(fp19_round_half_even(0x3FFFF000u), 0x40000000u);  // carry into the exponent
  EXPECT_EQ(ascend::fp19_truncate(0x3F801FFFu), 0x3F800000u);
}

// Round half to even to 11 significant bits, written independently on (sign, exponent, mantissa).
uint32_t fp19_reference(uint32_t u) {
  const uint32_t sign = u & 0x80000000u;
  uint32_t exponent = (u >> 23) & 0xFFu;
  const uint32_t mantissa = (u & 0x7FFFFFu) | 0x800000u;  // normal: implicit leading one
  uint32_t kept = mantissa >> 13;                          // 11 bits, 1xxxxxxxxxx
  const uint32_t dropped = mantissa & 0x1FFFu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (kept & 1u))) ++kept;
  if (kept == 0x800u) {  // 10.0000000000: renormalise
    kept >>= 1;
    ++exponent;
  }
  if (exponent >= 0xFFu) return sign | 0x7F800000u;
  return sign | (exponent << 23) | ((kept & 0x3FFu) << 13);
}

// The same rounding in double arithmetic: scale the value so 11 significant bits sit left of the
// point and let nearbyint (ties to even in the default mode) round it.
uint32_t fp19_via_double(uint32_t u) {
  const double v = float_of(u);
  int exp = 0;
  const double fraction = std::frexp(v, &exp);  // [0.5, 1)
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(fraction, 11)), exp - 11);
  if (std::fabs(rounded) > std::numeric_limits<float>::max())
    return (u & 0x80000000u) | 0x7F800000u;
  return bits_of(static_cast<float>(rounded));
}

// Every normal float32 bit pattern (about 4.2e9 values, about 7 s of CPU at -O2).
TEST(AscendFp19Exhaustive, RoundHalfEvenMatchesMantissaArithmetic) {
  uint64_t mismatches = 0;
  uint32_t first_bad = 0;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    const uint32_t lo = (sign << 31) | 0x00800000u, hi = (sign << 31) | 0x7F7FFFFFu;
    for (uint32_t u = lo;; ++u) {
      if (ascend::fp19_round_half_even(u) != fp19_reference(u)) {
        if (mismatches++ == 0) first_bad = u;
      }
      if (u == hi) break;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first mismatch at 0x" << std::hex << first_bad;
}

// A sample (every 997th normal pattern, plus the boundaries) against the double formulation.
TEST(AscendFp19Exhaustive, RoundHalfEvenMatchesDoubleArithmeticSample) {
  uint64_t checked = 0;
  for (uint64_t u = 0x00800000u; u <= 0xFF7FFFFFu; u += 997) {
    const uint32_t v = static_cast<uint32_t>(u);
    const uint32_t exponent = (v >> 23) & 0xFFu;
    if (exponent == 0 || exponent == 0xFF) continue;
    ASSERT_EQ(ascend::fp19_round_half_even(v), fp19_via_double(v)) << std::hex << v;
    ++checked;
  }
  for (uint32_t v : {0x00800000u, 0x7F7FFFFFu, 0x80800000u, 0xFF7FFFFFu, 0x3F801000u, 0x3F803000u})
    EXPECT_EQ(ascend::fp19_round_half_even(v), fp19_via_double(v)) << std::hex << v;
  EXPECT_GT(checked, 4000000u);
}

// --- TransQuantParamV2 ---------------------------------------------------------------------------

Result<std::vector<Tensor>> trans_quant(std::vector<Tensor> inputs, int64_t round_mode = 0) {
  NodeCase c;
  c.op = "TransQuantParamV2";
  c.domain = dialect::kAscendDomain;
  c.imports = {{dialect::kAscendDomain, dialect::kAscendDomainVersion}};
  c.inputs = std::move(inputs);
  c.attrs = [=](io::NodeBuilder& n) { n.attr("round_mode", round_mode); };
  return run_node(c);
}

std::vector<uint64_t> words_of(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::kUInt64);
  return values<uint64_t>(t);
}

TEST(TransQuantParamV2, WorkedWordsThroughTheKernel) {
  auto r0 = trans_quant({f32({2}, {1.0f, 0.3f})}, 0);
  ASSERT_TRUE(r0.is_ok()) << r0.status().to_string();
  EXPECT_EQ(words_of(r0.value()[0]), (std::vector<uint64_t>{0x40003F800000u, 0x40003E998000u}));
  auto r1 = trans_quant({f32({2}, {1.0f, 0.3f})}, 1);
  ASSERT_TRUE(r1.is_ok()) << r1.status().to_string();
  EXPECT_EQ(words_of(r1.value()[0]), (std::vector<uint64_t>{0x40003F800000u, 0x40003E99A000u}));
  auto off = trans_quant({f32({1}, {1.0f}), f32({1}, {-1.5f})});
  ASSERT_TRUE(off.is_ok()) << off.status().to_string();
  EXPECT_EQ(words_of(off.value()[0]), (std::vector<uint64_t>{0x7FC03F800000u}));
}

TEST(TransQuantParamV2, DefaultRoundModeIsTruncation) {
  NodeCase c;
  c.op = "TransQuantParamV2";
  c.domain = dialect::kAscendDomain;
  c.imports = {{dialect::kAscendDomain, 1}};
  c.inputs = {f32({1}, {0.3f})};
  auto r = run_node(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(words_of(r.value()[0]), std::vector<uint64_t>{0x40003E998000u});
}

TEST(TransQuantParamV2, Shapes) {
  // 1-D: length max(t_scale, t_offset), length 1 broadcasting either way.
  auto a = trans_quant({f32({3}, {1, 2, 4}), f32({1}, {1})});
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(a.value()[0].dims(), (Dims{3}));
  auto b = trans_quant({f32({1}, {1}), f32({4}, {0, 1, 2, 3})});
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  EXPECT_EQ(b.value()[0].dims(), (Dims{4}));
  const auto bw = words_of(b.value()[0]);
  for (size_t i = 0; i < bw.size(); ++i) EXPECT_EQ(ascend::decode_trans_quant_param(bw[i]).offset, static_cast<int>(i));
  // 2-D: the scale's shape; offsets (n,) or (1, n) fit.
  auto c = trans_quant({f32({1, 3}, {1, 2, 4}), f32({3}, {0, 1, 2})});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c.value()[0].dims(), (Dims{1, 3}));
  auto d = trans_quant({f32({3}, {1, 2, 4}), f32({1, 3}, {0, 1, 2})});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d.value()[0].dims(), (Dims{3}));
}

TEST(TransQuantParamV2, SubnormalScaleBecomesSignedZeroWhenRounding) {
  const float sub = -std::numeric_limits<float>::denorm_min() * 5;
  auto r = trans_quant({f32({1}, {sub})}, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(words_of(r.value()[0]), std::vector<uint64_t>{0x400080000000u});
}

TEST(TransQuantParamV2, Errors) {
  auto expect_error = [](const Result<std::vector<Tensor>>& r, Code code, const std::string& text) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(text), std::string::npos) << r.status().to_string();
  };
  const float inf = std::numeric_limits<float>::infinity();
  expect_error(trans_quant({f32({1}, {1})}, 2), Code::kInvalidModel, "round_mode");
  expect_error(trans_quant({f32({1}, {1})}, -1), Code::kInvalidModel, "round_mode");
  expect_error(trans_quant({f32({2}, {1, std::nanf("")})}), Code::kFailed, "scale must be finite");
  expect_error(trans_quant({f32({1}, {inf})}), Code::kFailed, "scale must be finite");
  expect_error(trans_quant({f32({1}, {1}), f32({1}, {-inf})}), Code::kFailed, "offset must be finite");
  expect_error(trans_quant({f32({2}, {1, 2}), f32({3}, {0, 0, 0})}), Code::kInvalidModel, "only length 1");
  expect_error(trans_quant({f32({0}, {})}), Code::kInvalidModel, "empty");
  expect_error(trans_quant({f32({1}, {1}), f32({0}, {})}), Code::kInvalidModel, "empty");
  expect_error(trans_quant({f32({1, 1, 2}, {1, 2})}), Code::kInvalidModel, "(t,) or (1, n)");
  expect_error(trans_quant({f32({2, 2}, {1, 2, 3, 4})}), Code::kInvalidModel, "(t,) or (1, n)");
  expect_error(trans_quant({make<double>(DType::kDouble, {1}, {1.0})}), Code::kInvalidModel, "T: tensor(float)");
  expect_error(trans_quant({f32({1, 1}, {1}), f32({3}, {0, 0, 0})}), Code::kInvalidModel, "wider");
  expect_error(trans_quant({Tensor()}), Code::kInvalidModel, "required");
}

// --- QuantBatchMatMul ----------------------------------------------------------------------------

Tensor words(Dims dims, const std::vector<uint64_t>& v) { return make<uint64_t>(DType::kUInt64, std::move(dims), v); }

struct QbmmAttrs {
  std::optional<int64_t> dtype;
  int64_t transpose_x1 = 0, transpose_x2 = 0;
};

Result<std::vector<Tensor>> qbmm(std::vector<Tensor> inputs, QbmmAttrs attrs) {
  NodeCase c;
  c.op = "QuantBatchMatMul";
  c.domain = dialect::kQuantBatchMatMulDomain;
  c.opset = 16;  // ATC reads ai.onnx::8..16::QuantBatchMatMul
  c.inputs = std::move(inputs);
  c.attrs = [=](io::NodeBuilder& n) {
    if (attrs.dtype) n.attr("dtype", *attrs.dtype);
    n.attr("transpose_x1", attrs.transpose_x1).attr("transpose_x2", attrs.transpose_x2);
  };
  return run_node(c);
}

// x1 (2, 3) @ x2 (3, 2) = {{-22, 3}, {41, 10}}
const Tensor kX1 = i8({2, 3}, {1, -2, 3, 4, 5, -6});
const Tensor kX2 = i8({3, 2}, {-1, 2, 3, 4, -5, 3});
const std::vector<int32_t> kAcc = {-22, 3, 41, 10};

TEST(QuantBatchMatMul, Float16OutputIsTheDefault) {
  const uint64_t w = ascend::encode_trans_quant_param(0.3f, std::nullopt, 1);
  const float m1 = ascend::decode_trans_quant_param(w).scale;
  auto r = qbmm({kX1, kX2, words({1}, {w})}, {});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = r.value()[0];
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  for (size_t i = 0; i < kAcc.size(); ++i)
    EXPECT_EQ(y.data<uint16_t>()[i], float_to_half(static_cast<float>(kAcc[i]) * m1)) << i;
}

TEST(QuantBatchMatMul, Float32PerChannelWithBiasAndTransposes) {
  const float s0 = 0.125f, s1 = 0.3f;
  const uint64_t w0 = ascend::encode_trans_quant_param(s0, std::nullopt, 0);
  const uint64_t w1 = ascend::encode_trans_quant_param(s1, std::nullopt, 0);
  const float m1 = ascend::decode_trans_quant_param(w1).scale;
  // x1 given as (k, m), x2 as (n, k).
  const Tensor x1t = i8({3, 2}, {1, 4, -2, 5, 3, -6});
  const Tensor x2t = i8({2, 3}, {-1, 3, -5, 2, 4, 3});
  auto r = qbmm({x1t, x2t, words({1, 2}, {w0, w1}), Tensor(), i32({2}, {1, -2})}, {0, 1, 1});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = r.value()[0];
  ASSERT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(values_f32(y), (std::vector<float>{(-22 + 1) * s0, (3 - 2) * m1, (41 + 1) * s0, (10 - 2) * m1}));
}

std::vector<int8_t> int8_result(const Result<std::vector<Tensor>>& r) {
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return {};
  const Tensor& y = r.value()[0];
  EXPECT_EQ(y.dtype(), DType::kInt8);
  return values<int8_t>(y);
}

TEST(QuantBatchMatMul, Int8OutputClampsTwice) {
  // t = clamp(rne(acc * M1), -256, 255), then y = clamp(t + offset, -128, 127). With offset 255,
  // -22 * 16 = -352 clamps to -256 first and ends at -1 (not at -97).
  const uint64_t w = ascend::encode_trans_quant_param(16.0f, 255.0f, 0);
  EXPECT_EQ(int8_result(qbmm({kX1, kX2, words({1}, {w})}, {2})), (std::vector<int8_t>{-1, 127, 127, 127}));
}

TEST(QuantBatchMatMul, Int8OutputRoundsHalfToEven) {
  // acc * 0.25 = -5.5, 0.75, 10.25, 2.5 -> -6, 1, 10, 2; then the offset -2.
  const uint64_t w = ascend::encode_trans_quant_param(0.25f, -2.0f, 0);
  EXPECT_EQ(int8_result(qbmm({kX1, kX2, words({1}, {w})}, {2})), (std::vector<int8_t>{-8, -1, 8, 0}));
}

TEST(QuantBatchMatMul, Int32AndBFloat16Outputs) {
  const uint64_t w = ascend::encode_trans_quant_param(0.5f, std::nullopt, 0);
  auto r = qbmm({kX1, kX2, words({1}, {w}), Tensor(), i32({1}, {100})}, {3});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = r.value()[0];
  ASSERT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ((std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 4)), (std::vector<int32_t>{78, 103, 141, 110}));
  auto b = qbmm({kX1, kX2, words({1}, {w})}, {27});
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  ASSERT_EQ(b.value()[0].dtype(), DType::kBFloat16);
  for (size_t i = 0; i < kAcc.size(); ++i)
    EXPECT_EQ(b.value()[0].data<uint16_t>()[i], float_to_bfloat16(static_cast<float>(kAcc[i]) * 0.5f));
}

TEST(QuantBatchMatMul, BatchDimsBroadcastLikeMatMul) {
  // x1 (2, 1, 1, 3) with x2 (3, 3, 1): out (2, 3, 1, 1); entry [b, c] = x1[b] . x2[c].
  const Tensor x1 = i8({2, 1, 1, 3}, {1, 2, 3, -1, 0, 1});
  const Tensor x2 = i8({3, 3, 1}, {1, 1, 1, 0, 1, 0, 2, 0, -1});
  const uint64_t w = ascend::encode_trans_quant_param(1.0f, std::nullopt, 0);
  auto r = qbmm({x1, x2, words({1}, {w})}, {0});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].dims(), (Dims{2, 3, 1, 1}));
  EXPECT_EQ(values_f32(r.value()[0]), (std::vector<float>{6, 2, -1, 0, 0, -3}));
}

TEST(QuantBatchMatMul, Errors) {
  const Tensor w1 = words({1}, {ascend::encode_trans_quant_param(1.0f, std::nullopt, 0)});
  auto expect_error = [](const Result<std::vector<Tensor>>& r, Code code, const std::string& text) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(text), std::string::npos) << r.status().to_string();
  };
  expect_error(qbmm({kX1, kX2, w1}, {5}), Code::kInvalidModel, "dtype 5");
  // Operand types are the schema's type constraints, checked before the kernel runs.
  expect_error(qbmm({f32({2, 3}, {}), kX2, w1}, {}), Code::kInvalidModel, "I: tensor(int8)");
  expect_error(qbmm({i8({3}, {1, 2, 3}), kX2, w1}, {}), Code::kInvalidModel, "rank >= 2");
  expect_error(qbmm({kX1, i8({2, 2}, {}), w1}, {}), Code::kInvalidModel, "inner dimension");
  expect_error(qbmm({i8({2, 2, 3}, {}), i8({3, 3, 2}, {}), w1}, {}), Code::kInvalidModel, "broadcast");
  expect_error(qbmm({kX1, kX2, f32({1}, {1.0f})}, {}), Code::kInvalidModel, "uint64");
  expect_error(qbmm({kX1, kX2, words({3}, {0, 0, 0})}, {}), Code::kInvalidModel, "scale shape");
  expect_error(qbmm({kX1, kX2, words({1}, {0x40007FC00000u})}, {}), Code::kFailed, "non-finite");
  expect_error(qbmm({kX1, kX2, w1, f32({1}, {0})}, {2}), Code::kUnsupported, "offset");
  expect_error(qbmm({kX1, kX2, w1, Tensor(), Tensor(), f32({2}, {1, 1})}, {}), Code::kUnsupported, "pertoken");
  expect_error(qbmm({kX1, kX2, w1, Tensor(), i32({3}, {0, 0, 0})}, {}), Code::kInvalidModel, "bias shape");
  expect_error(qbmm({kX1, kX2, w1, Tensor(), make<int64_t>(DType::kInt64, {2}, {0, 0})}, {}), Code::kInvalidModel,
               "int32");
  expect_error(qbmm({kX1, Tensor(), w1}, {}), Code::kInvalidModel, "required");
}

}  // namespace
}  // namespace qonnx::test
