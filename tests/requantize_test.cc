// The integer path's fused epilogue pass (avx2::requantize_run: the rounding of the exact sums, then Relu,
// Quant and BipolarQuant steps, then the activation bytes, in registers) gives the bits of the loops it
// stands for run one after the other (scale_sums_run, quant_run, bipolar_quant_run, the Relu function,
// activation_bytes_run), on tie-rich values (every t = y / s a multiple of 1/2), clamp bounds, -0, NaN and
// every rounding mode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/quant_avx2.h"
#include "kernels/isa/isa.h"
#include "qonnx/quant/rounding.h"

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
void separately(const std::vector<ElementwiseStep>& steps, float* y, int64_t n) {
  for (const ElementwiseStep& s : steps) {
    switch (s.kind) {
      case Kind::kRelu:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0 ? y[i] : 0.0f;
        break;
      case Kind::kBipolarQuant:
        ASSERT_EQ(avx2::bipolar_quant_run(y, &s.scale, false, y, n), n);
        break;
      case Kind::kQuant:
        ASSERT_EQ(avx2::quant_run(s.bipolar ? quant::RoundingMode::kRound : s.mode, s.bipolar, false, y, &s.scale, &s.zero_point,
                                  false, s.lo, s.hi, y, n),
                  n);
        break;
    }
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Requantize, TheFusedPassGivesTheSeparateLoopsBits) {
  if (isa::best(isa::Family::kQuant) == isa::Isa::kPortable) GTEST_SKIP() << "this CPU has no AVX2: the pass does not run";
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

}  // namespace
}  // namespace qonnx::kernels
