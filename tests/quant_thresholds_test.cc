// quant_level_thresholds: for every float32 tried (random, each threshold and its neighbours, zeros,
// infinities) the MultiThreshold count (thresholds t with x >= t) is the Quant's code minus the lowest
// level, for every rounding mode, signed/unsigned, narrow, bit widths 1..8, zero points and scales.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "qonnx/quant/thresholds.h"

namespace qonnx::test {
namespace {

int count_at_or_below(const std::vector<float>& thresholds, float x) {
  int n = 0;
  for (float t : thresholds) n += x >= t;
  return n;
}

TEST(QuantThresholds, CountEqualsCodeForEveryFloatTried) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-300.0f, 300.0f);
  int cases = 0;
  for (auto mode : {quant::RoundingMode::kRound, quant::RoundingMode::kFloor, quant::RoundingMode::kCeil,
                    quant::RoundingMode::kUp, quant::RoundingMode::kDown, quant::RoundingMode::kHalfUp,
                    quant::RoundingMode::kHalfDown})
    for (int bits : {2, 3, 4, 8})
      for (bool is_signed : {true, false})
        for (bool narrow : {false, true})
          for (float scale : {0.1f, 1.0f, 0.0078125f, 3.3f})
            for (float zero : {0.0f, 1.0f, -2.5f}) {
              quant::QuantParams p;
              p.bits = bits;
              p.is_signed = is_signed;
              p.narrow = narrow;
              p.mode = mode;
              const quant::IntRange range = quant::quant_int_range(bits, is_signed, narrow);
              auto r = quant::quant_level_thresholds(scale, zero, range, p);
              ASSERT_TRUE(r.is_ok()) << r.status().to_string();
              const auto& th = r->thresholds;
              std::vector<float> xs = {-INFINITY, INFINITY, 0.0f, -0.0f};
              for (float t : th)
                for (float x : {t, std::nextafter(t, -INFINITY), std::nextafter(t, INFINITY)}) xs.push_back(x);
              for (int i = 0; i < 200; ++i) xs.push_back(wide(rng) * scale);
              for (float x : xs) {
                const float code = quant::quant_code(x, scale, zero, range, p);
                ASSERT_EQ(static_cast<float>(count_at_or_below(th, x)), code - r->lowest)
                    << "x=" << x << " scale=" << scale << " zero=" << zero << " bits=" << bits;
              }
              ++cases;
            }
  EXPECT_GT(cases, 1000);
}

TEST(QuantThresholds, RefusesWhatIsNotMonotone) {
  quant::QuantParams p;
  const auto range = quant::quant_int_range(8, true, false);
  EXPECT_FALSE(quant::quant_level_thresholds(-1.0f, 0.0f, range, p).is_ok());
  EXPECT_FALSE(quant::quant_level_thresholds(0.0f, 0.0f, range, p).is_ok());
  EXPECT_FALSE(quant::quant_level_thresholds(NAN, 0.0f, range, p).is_ok());
  EXPECT_FALSE(quant::quant_level_thresholds(1.0f, INFINITY, range, p).is_ok());
}

}  // namespace
}  // namespace qonnx::test
