// The kernels' one CPU-feature selector (src/kernels/isa): its decision for every combination of CPU
// features and QONNX_SIMD, the same decisions the float GEMM and the quantization loops made before
// they shared it, and the switch tests and benchmarks use.
#include <string>

#include <gtest/gtest.h>

#include "kernels/isa/isa.h"

namespace qonnx::kernels::isa {
namespace {

CpuFeatures cpu(bool avx2, bool fma, bool avx512f) {
  CpuFeatures f;
  f.avx2 = avx2, f.fma = fma, f.avx512f = avx512f;
  return f;
}

// The float family: AVX-512 tiles need avx512f + avx2 + fma, AVX2 tiles avx2 + fma; QONNX_SIMD is
// not read.
TEST(IsaSelect, FloatFamilyNeedsFmaAndTakesTheBest) {
  const struct {
    bool avx2, fma, avx512f;
    Isa want;
  } cases[] = {
      {false, false, false, Isa::kPortable}, {true, false, false, Isa::kPortable}, {false, true, false, Isa::kPortable},
      {true, true, false, Isa::kAvx2},       {true, true, true, Isa::kAvx512},     {true, false, true, Isa::kPortable},
      {false, true, true, Isa::kPortable},   {false, false, true, Isa::kPortable},
  };
  for (const auto& c : cases) {
    const CpuFeatures f = cpu(c.avx2, c.fma, c.avx512f);
    for (const char* env : {static_cast<const char*>(nullptr), "portable", "avx2", ""})
      EXPECT_EQ(select(Family::kFloat, f, env), c.want)
          << "avx2 " << c.avx2 << " fma " << c.fma << " avx512f " << c.avx512f << " QONNX_SIMD " << (env ? env : "unset");
  }
}

// The quantization family: AVX2 needs avx2 only (its loops never fuse), AVX-512 avx2 + avx512f, and
// QONNX_SIMD=portable (only that value) selects the portable loops.
TEST(IsaSelect, QuantFamilyNeedsAvx2OnlyAndHonoursQonnxSimd) {
  for (bool fma : {false, true})
    for (bool avx512f : {false, true}) {
      const Isa want = avx512f ? Isa::kAvx512 : Isa::kAvx2;
      EXPECT_EQ(select(Family::kQuant, cpu(true, fma, avx512f), nullptr), want);
      EXPECT_EQ(select(Family::kQuant, cpu(true, fma, avx512f), "avx2"), want);
      EXPECT_EQ(select(Family::kQuant, cpu(true, fma, avx512f), "AVX2"), want);
      EXPECT_EQ(select(Family::kQuant, cpu(true, fma, avx512f), "portable"), Isa::kPortable);
      EXPECT_EQ(select(Family::kQuant, cpu(false, fma, avx512f), nullptr), Isa::kPortable);
      EXPECT_EQ(select(Family::kQuant, cpu(false, fma, avx512f), "avx2"), Isa::kPortable);
    }
}

// The int8 family: AVX2 needs avx2; AVX-VNNI avx2 + avx-vnni; AVX-512 VNNI avx512f + avx512bw +
// avx512vnni (+ avx2). The two VNNI levels are independent: each CPU gets the best it runs, kAvx512
// when both. QONNX_SIMD=portable selects the portable path.
TEST(IsaSelect, Int8FamilyTakesTheBestVnniTheCpuRuns) {
  const struct {
    bool avx2, avxvnni, avx512f, avx512bw, avx512vnni;
    Isa want;
  } cases[] = {
      {false, false, false, false, false, Isa::kPortable}, {true, false, false, false, false, Isa::kAvx2},
      {true, true, false, false, false, Isa::kAvxVnni},     {true, false, true, true, true, Isa::kAvx512},
      {true, true, true, true, true, Isa::kAvx512},         {true, false, true, true, false, Isa::kAvx2},
      {true, true, true, false, true, Isa::kAvxVnni},       {true, false, true, false, true, Isa::kAvx2},
      {false, true, false, false, false, Isa::kPortable},
  };
  for (const auto& c : cases) {
    CpuFeatures f = cpu(c.avx2, true, c.avx512f);
    f.avxvnni = c.avxvnni, f.avx512bw = c.avx512bw, f.avx512vnni = c.avx512vnni;
    const std::string what = "avx2 " + std::to_string(c.avx2) + " avxvnni " + std::to_string(c.avxvnni) +
                             " avx512f/bw/vnni " + std::to_string(c.avx512f) + std::to_string(c.avx512bw) +
                             std::to_string(c.avx512vnni);
    EXPECT_EQ(select(Family::kInt8, f, nullptr), c.want) << what;
    EXPECT_EQ(select(Family::kInt8, f, "avx2"), c.want) << what;
    EXPECT_EQ(select(Family::kInt8, f, "portable"), Isa::kPortable) << what;
    // The other families have no VNNI level.
    EXPECT_NE(select(Family::kFloat, f, nullptr), Isa::kAvxVnni) << what;
    EXPECT_NE(select(Family::kQuant, f, nullptr), Isa::kAvxVnni) << what;
  }
}

TEST(IsaSelect, SupportsFollowsTheFeatures) {
  const CpuFeatures none = cpu(false, false, false), all = cpu(true, true, true), avx2 = cpu(true, false, false);
  for (Family f : {Family::kFloat, Family::kQuant, Family::kInt8}) EXPECT_TRUE(supports(f, Isa::kPortable, none));
  EXPECT_TRUE(supports(Family::kFloat, Isa::kAvx512, all));
  EXPECT_TRUE(supports(Family::kQuant, Isa::kAvx512, all));
  EXPECT_FALSE(supports(Family::kQuant, Isa::kAvx512, avx2));
  EXPECT_TRUE(supports(Family::kQuant, Isa::kAvx2, avx2));
  EXPECT_FALSE(supports(Family::kFloat, Isa::kAvx2, avx2));
}

// On this machine: the process-wide choice is the selector's, and use() switches within what the
// CPU runs (an unsupported wish falls to the best supported path below it).
TEST(IsaCurrent, StartsAtTheSelectorsChoiceAndSwitches) {
  const CpuFeatures here = cpu_features();
  for (Family f : {Family::kFloat, Family::kQuant, Family::kInt8}) {
    EXPECT_EQ(best(f), select(f, here, nullptr));
    const Isa before = use(f, Isa::kPortable);
    EXPECT_EQ(current(f), Isa::kPortable);
    use(f, Isa::kAvx512);
    EXPECT_EQ(current(f), best(f));
    EXPECT_TRUE(supports(f, current(f), here));
    use(f, before);
    EXPECT_EQ(current(f), before);
  }
}

TEST(IsaName, NamesEveryLevel) {
  EXPECT_STREQ(name(Isa::kPortable), "portable");
  EXPECT_STREQ(name(Isa::kAvx2), "avx2");
  EXPECT_STREQ(name(Isa::kAvxVnni), "avxvnni");
  EXPECT_STREQ(name(Isa::kAvx512), "avx512");
}

}  // namespace
}  // namespace qonnx::kernels::isa
