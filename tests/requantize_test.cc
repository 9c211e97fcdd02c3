// The integer path's fused epilogue pass (avx2::requantize_run: the rounding of the exact sums, then Relu,
// Quant and BipolarQuant steps, then the activation bytes, in registers) gives the bits of the loops it
// stands for run one after the other (scale_sums_run, quant_run, bipolar_quant_run, the Relu function,
// activation_bytes_run), on tie-rich values (every t = y / s a multiple of 1/2), clamp bounds, -0, NaN and
// every rounding mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/integer_form.h"
#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/quant/rounding.h"
#include "support/simd_levels.h"

namespace qonnx::kernels {
namespace {

using avx2::ElementwiseStep;
using Kind = ElementwiseStep::Kind;

const quant::RoundingMode kModes[] = {quant::RoundingMode::kRound, quant::RoundingMode::kCeil,   quant::RoundingMode::kFloor,
                                      quant::RoundingMode::kUp,    quant::RoundingMode::kDown,   quant::RoundingMode::kHalfUp,
                                      quant::RoundingMode::kHalfDown};

ElementwiseStep quant_step(quant::RoundingMode mode, float scale, float zero_point, int bits, bool is_signed, bool narrow) {
  ElementwiseStep s;
  s.kind = Kind::kQuant;
  s.mode = mode, s.scale = scale, s.zero_point = zero_point;
  const quant::IntRange r = quant::quant_int_range(bits, is_signed, narrow);
  s.lo = r.min, s.hi = r.max;
  s.bipolar = bits == 1 && is_signed;
  return s;
}

// The loops one after the other, on y in place.
// The steps as their separate loops run them on n values: the vector loops, then the scalar forms past them
// (where the layers finish a row's last channels).
void separately(const std::vector<ElementwiseStep>& steps, float* y, int64_t n) {
  for (const ElementwiseStep& s : steps) {
    switch (s.kind) {
      case Kind::kRelu:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0 ? y[i] : 0.0f;
        break;
      case Kind::kBipolarQuant:
        for (int64_t i = avx2::bipolar_quant_run(y, &s.scale, false, y, n); i < n; ++i)
          y[i] = (y[i] >= 0.0f ? 1.0f : -1.0f) * s.scale;
        break;
      case Kind::kQuant: {
        const quant::RoundingMode mode = s.bipolar ? quant::RoundingMode::kRound : s.mode;
        for (int64_t i = avx2::quant_run(mode, s.bipolar, false, y, &s.scale, &s.zero_point, false, s.lo, s.hi, y, n); i < n;
             ++i) {
          const float t = y[i] / s.scale + s.zero_point;
          const float q = s.bipolar ? (t >= 0.0f ? 1.0f : -1.0f) : quant::apply_rounding(mode, std::min(s.hi, std::max(s.lo, t)));
          y[i] = (q - s.zero_point) * s.scale;
        }
        break;
      }
    }
  }
}

// The loops requantize_run stands for, on one row of n channels (scalar past their vectors): scale_sums_run,
// the steps, activation_bytes_run. false when a code could not be made.
bool reference_row(const int32_t* sums, const int32_t* offset, const double* scale, const double* bias,
                   const std::vector<ElementwiseStep>& steps, const avx2::CodeTarget& codes, float* y, uint8_t* u,
                   int64_t n) {
  for (int64_t j = avx2::scale_sums_run(sums, offset, scale, bias, y, n); j < n; ++j)
    y[j] = scale_sum(int64_t{sums[j]} + offset[j], scale[j], bias ? bias[j] : 0.0);
  separately(steps, y, n);
  ByteActivation form;
  form.scale = codes.scale, form.lo = static_cast<int64_t>(codes.lo), form.hi = static_cast<int64_t>(codes.hi);
  return activation_bytes_serial(y, n, form, u);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The vector paths of the pass this CPU runs (the pass has no portable form: the callers finish its rows).
std::vector<isa::Isa> vector_levels() {
  std::vector<isa::Isa> levels;
  for (isa::Isa level : test::simd_levels())
    if (level != isa::Isa::kPortable) levels.push_back(level);
  return levels;
}

TEST(Requantize, TheFusedPassGivesTheSeparateLoopsBits) {
  if (isa::best(isa::Family::kQuant) == isa::Isa::kPortable) GTEST_SKIP() << "this CPU has no AVX2: the pass does not run";
  for (isa::Isa level : vector_levels()) {
    test::ScopedSimdLevel scoped(level);
    std::mt19937 rng(3);
    constexpr int64_t n = 64;  // channels
    std::uniform_int_distribution<int32_t> sum(-600, 600), off(-40, 40);
    const double scales[] = {0.5, 0.25, 1.0, 0.125};
    const double biases[] = {0.25, -0.125, 0.0, 0.375};
    int cases = 0, with_bad_codes = 0;
    for (quant::RoundingMode mode : kModes)
      for (int layout = 0; layout < 8; ++layout) {
        // Chains: Quant; Relu, Quant; Quant, Relu; BipolarQuant; Relu, 1-bit signed Quant; Relu; none.
        const float qs = 0.25f, qz = static_cast<float>(layout % 3 - 1) * 3.0f;
        std::vector<ElementwiseStep> steps;
        const ElementwiseStep relu;
        ElementwiseStep bipolar;
        bipolar.kind = Kind::kBipolarQuant, bipolar.scale = 0.75f;
        switch (layout) {
          case 0: steps = {quant_step(mode, qs, qz, 8, false, false)}; break;
          case 1: steps = {relu, quant_step(mode, qs, qz, 4, true, true)}; break;
          case 2: steps = {quant_step(mode, qs, qz, 6, true, false), relu}; break;
          case 3: steps = {bipolar}; break;
          case 4: steps = {relu, quant_step(mode, qs, 0.0f, 1, true, false)}; break;
          case 5: steps = {relu}; break;
          case 6: steps = {}; break;
          default: steps = {relu, relu, quant_step(mode, 0.5f, 0.0f, 2, false, false)}; break;
        }
        for (bool with_bias : {true, false})
          for (bool nan_bias : {false, true}) {
            std::vector<int32_t> sums(n), offset(n);
            std::vector<double> scale(n), bias(n);
            for (int64_t j = 0; j < n; ++j) {
              sums[j] = sum(rng), offset[j] = off(rng);
              scale[j] = scales[j % 4], bias[j] = biases[(j / 4) % 4];
            }
            sums[5] = -offset[5];  // an exact zero sum: -0.0 + bias or +0.0
            if (nan_bias) bias[9] = std::numeric_limits<double>::quiet_NaN();
            // The codes of the last step's form (a Quant's integers minus its zero point), else of 1/4 steps.
            const ElementwiseStep* last = steps.empty() ? nullptr : &steps.back();
            avx2::CodeTarget codes;
            codes.scale = last && last->kind == Kind::kQuant ? last->scale : 0.25f;
            codes.inverse = 1.0f / codes.scale;
            codes.lo = last && last->kind == Kind::kQuant ? last->lo - last->zero_point : -128.0f;
            codes.hi = last && last->kind == Kind::kQuant ? last->hi - last->zero_point : 127.0f;
            std::vector<float> fused(n), expected(n);
            std::vector<uint8_t> fused_codes(n), expected_codes(n);
            codes.u = fused_codes.data();
            int fused_bad = 0, expected_bad = 0;
            avx2::RequantizeRows r;
            r.sums = sums.data(), r.offset = offset.data(), r.scale = scale.data(), r.bias = with_bias ? bias.data() : nullptr;
            r.steps = steps.data(), r.step_count = static_cast<int>(steps.size());
            r.y = fused.data(), r.codes = &codes, r.bad = &fused_bad, r.rows = 1, r.n = n;
            ASSERT_EQ(avx2::requantize_run(r), n);
            ASSERT_EQ(avx2::scale_sums_run(sums.data(), offset.data(), scale.data(), with_bias ? bias.data() : nullptr,
                                           expected.data(), n),
                      n);
            separately(steps, expected.data(), n);
            ASSERT_EQ(avx2::activation_bytes_run(expected.data(), codes.inverse, codes.scale, codes.lo, codes.hi,
                                                 expected_codes.data(), &expected_bad, n),
                      n);
            for (int64_t j = 0; j < n; ++j)
              ASSERT_TRUE(same_bits(fused[j], expected[j]))
                  << "mode " << static_cast<int>(mode) << " layout " << layout << " channel " << j << ": " << fused[j]
                  << " vs " << expected[j];
            EXPECT_EQ(fused_codes, expected_codes);
            EXPECT_EQ(fused_bad != 0, expected_bad != 0);
            with_bad_codes += expected_bad != 0;
            ++cases;
          }
      }
    // The cases include runs whose codes cannot be made (a NaN, or values the form does not describe).
    EXPECT_GT(with_bad_codes, 0);
    EXPECT_LT(with_bad_codes, cases);
  }
}

// u = y / s + z as the exact chain computes it (y = float(double(S) * c + b), Relu, the division, + z) and as
// a single float multiply-add from float(c / s) and float(b / s) would: the two sides of the direct form's
// argument (docs/arithmetic.md), to find the sums where they straddle a half-integer or zero.
struct TwoWays {
  float exact, direct;
};
TwoWays u_both_ways(int32_t whole, double c, double b, const ElementwiseStep& q, bool relu) {
  float y = static_cast<float>(static_cast<double>(whole) * c + b);
  if (relu) y = y > 0 ? y : 0.0f;
  const float ratio = static_cast<float>(c / q.scale), shift = static_cast<float>(b / q.scale);
  const float product = static_cast<float>(whole) * ratio;
  float a = product + shift;
  if (relu) a = a > 0 ? a : 0.0f;
  return {y / q.scale + q.zero_point, a + q.zero_point};
}

bool straddles(const TwoWays& u) {
  const auto side = [](float v) { return std::floor(v - 0.5f); };  // changes at every half-integer
  return side(u.exact) != side(u.direct) || std::signbit(u.exact) != std::signbit(u.direct) ||
         (u.exact == 0.0f) != (u.direct == 0.0f);
}

// The direct form of a [Relu] Quant chain (one float multiply-add per element in place of the double rounding
// and the division, docs/arithmetic.md) against the separate loops, with non-dyadic scales and per-channel
// biases, on sums chosen where the two computations of u straddle a half-integer or zero (there the direct
// form must hand over to the exact chain) and on sums anywhere, clamped values included.
TEST(Requantize, TheDirectFormGivesTheExactBitsWhereItsRoundingDiffers) {
  if (isa::best(isa::Family::kQuant) == isa::Isa::kPortable) GTEST_SKIP() << "this CPU has no AVX2: the pass does not run";
  std::mt19937 rng(11);
  // 24 channels: whole vectors; 21 and 5: the last channels in a vector of their own, in blocks of 64 rows.
  constexpr int64_t rows = 70;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const int64_t n : {int64_t{24}, int64_t{21}, int64_t{5}}) {
  int cases = 0, straddling = 0;
  for (quant::RoundingMode mode : kModes)
    for (int chain = 0; chain < 5; ++chain) {
      // Relu + unsigned Quant, z = 0; signed Quant, z = 0; Relu + unsigned Quant, z = 7; unsigned Quant with
      // no Relu (negative values clamp to 0); signed narrow Quant, z = -3.
      const float qs = static_cast<float>(0.01 + 0.05 * unit(rng));
      std::vector<ElementwiseStep> steps;
      switch (chain) {
        case 0: steps = {ElementwiseStep{}, quant_step(mode, qs, 0.0f, 8, false, false)}; break;
        case 1: steps = {quant_step(mode, qs, 0.0f, 8, true, false)}; break;
        case 2: steps = {ElementwiseStep{}, quant_step(mode, qs, 7.0f, 8, false, false)}; break;
        case 3: steps = {quant_step(mode, qs, 0.0f, 4, false, false)}; break;
        default: steps = {quant_step(mode, qs, -3.0f, 6, true, true)}; break;
      }
      const ElementwiseStep& q = steps.back();
      const bool relu = steps.size() == 2;
      std::vector<int32_t> sums(rows * n), offset(n);
      std::vector<double> scale(n), bias(n);
      for (int64_t j = 0; j < n; ++j) {
        // c / s near 2^-8 and b / s up to +-400: large products that cancel, where float's rounding errors are
        // largest, give many sums whose two computations straddle a tie.
        scale[j] = static_cast<double>(qs) * std::ldexp(1.0 + unit(rng), -8);
        bias[j] = static_cast<double>(qs) * (unit(rng) - 0.5) * 800.0;
        offset[j] = chain == 0 ? 0 : static_cast<int32_t>(j) - 10;  // chain 0: no offsets (unsigned activations)
        // Every fourth channel: b = -(S0 * c) in double, so that S0 gives y = +0 exactly, which the float form
        // may see as a tiny negative (the sign of a zero code); rows rows-2 and rows-1 hold S0.
        const int32_t zero_at = static_cast<int32_t>(rng() % 40000) + 5000;  // |b / s| < 2^9: the direct form applies
        if (j % 4 == 3) bias[j] = -(static_cast<double>(zero_at) * scale[j]);
        // Rows 0 .. rows/2: the first straddling sums from a random start; the rest random (clamped ones too).
        int64_t i = 0;
        const int32_t start = static_cast<int32_t>(rng() % 200000) - 100000;
        for (int32_t whole = start; whole < start + 400000 && i < rows / 2; ++whole)
          if (straddles(u_both_ways(whole, scale[j], bias[j], q, relu))) sums[static_cast<size_t>(i++ * n + j)] = whole - offset[j];
        straddling += static_cast<int>(i);
        for (; i < rows; ++i) sums[static_cast<size_t>(i * n + j)] = static_cast<int32_t>(rng() % 400000) - 200000;
        if (j % 4 == 3) {
          for (int64_t k = rows - 2; k < rows; ++k) sums[static_cast<size_t>(k * n + j)] = zero_at - offset[j];
        }
      }
      avx2::CodeTarget codes;
      codes.scale = q.scale, codes.inverse = 1.0f / q.scale, codes.lo = q.lo - q.zero_point, codes.hi = q.hi - q.zero_point;
      std::vector<float> expected(rows * n);
      std::vector<uint8_t> expected_codes(rows * n);
      int expected_bad = 0;
      for (int64_t i = 0; i < rows; ++i)
        expected_bad |= !reference_row(sums.data() + i * n, offset.data(), scale.data(), bias.data(), steps, codes,
                                       expected.data() + i * n, expected_codes.data() + i * n, n);
      EXPECT_EQ(expected_bad, 0);
      // Both vector paths: 8 lanes, and 16 (its first 16 channels) where the CPU has AVX-512; with the floats,
      // and with the codes only (the form that writes no y).
      for (isa::Isa level : vector_levels())
        for (bool floats : {true, false}) {
          test::ScopedSimdLevel scoped(level);
          std::vector<float> fused(rows * n);
          std::vector<uint8_t> fused_codes(rows * n);
          codes.u = fused_codes.data();
          int fused_bad = 0;
          avx2::RequantizeRows r;
          r.sums = sums.data(), r.sums_ld = n, r.offset = offset.data(), r.scale = scale.data(), r.bias = bias.data();
          r.steps = steps.data(), r.step_count = static_cast<int>(steps.size());
          r.y = fused.data(), r.y_ld = n, r.codes = &codes, r.codes_ld = n, r.bad = &fused_bad, r.rows = rows, r.n = n;
          r.floats = floats;
          ASSERT_EQ(avx2::requantize_run(r), n);
          for (int64_t e = 0; floats && e < rows * n; ++e)
            ASSERT_TRUE(same_bits(fused[e], expected[e]))
                << isa::name(level) << " mode " << static_cast<int>(mode) << " chain " << chain << " element " << e << ": "
                << fused[e] << " vs " << expected[e];
          EXPECT_EQ(fused_codes, expected_codes) << isa::name(level) << (floats ? "" : ", codes only");
          EXPECT_EQ(fused_bad, 0) << isa::name(level);
        }
      ++cases;
    }
  EXPECT_EQ(cases, 35);
  // Most channels find at least 16 straddling sums (the test means nothing without them).
  EXPECT_GT(straddling, 35 * n * 16 / 2) << n << " channels";
  std::printf("direct form, %d channels: %d straddling sums among %d cases\n", static_cast<int>(n), straddling, cases);
  }
}

}  // namespace
}  // namespace qonnx::kernels
