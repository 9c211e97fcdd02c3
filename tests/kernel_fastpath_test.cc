// The vectorised quantization loops (kernels/common/fast_math.h, kernels/qonnx/fast_kernels.h,
// kernels/onnx/quantize_linear.h) against plain scalar references written element by element from
// SEMANTICS.md, bit for bit, for every rounding mode and parameter layout, on random, tie-rich and special (NaN, inf, -0.0, huge, subnormal) data,
// on every instruction-set path (portable and AVX2: the FastPath tests run once per level).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/onnx/quantize_linear.h"
#include "kernels/qonnx/fast_kernels.h"
#include "kernels/common/fast_math.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/quant/rounding.h"
#include "support/simd_levels.h"

namespace qonnx::kernels {
namespace {

class FastPath : public ::testing::TestWithParam<isa::Isa> {
 protected:
  test::ScopedSimdLevel level_{GetParam()};
};
INSTANTIATE_TEST_SUITE_P(Levels, FastPath, ::testing::ValuesIn(test::simd_levels()),
                         [](const auto& info) { return test::simd_level_param_name(info.param); });

const quant::RoundingMode kModes[] = {quant::RoundingMode::kRound, quant::RoundingMode::kCeil,   quant::RoundingMode::kFloor,
                               quant::RoundingMode::kUp,    quant::RoundingMode::kDown,   quant::RoundingMode::kHalfUp,
                               quant::RoundingMode::kHalfDown};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Reports the first differing element (bits) of two float arrays. A NaN must meet a NaN, but its sign
// and payload are not compared: which operand's NaN a commutative operation (NaN * NaN) propagates
// depends on the operand order the compiler picks, in the reference as in the vector loop.
::testing::AssertionResult same_bits(const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (bits(a[i]) != bits(b[i]) && !(std::isnan(a[i]) && std::isnan(b[i])))
      return ::testing::AssertionFailure() << "element " << i << ": fast " << a[i] << " (0x" << std::hex << bits(a[i])
                                           << ") vs reference " << b[i] << " (0x" << bits(b[i]) << std::dec << ")";
  return ::testing::AssertionSuccess();
}

template <typename F>
void for_each_mode(F&& f) {
  for (quant::RoundingMode m : kModes) {
    SCOPED_TRACE(quant::rounding_mode_name(m));
    fast::with_mode(m, [&](auto mode_c) { f(m, mode_c); });
  }
}

// Floats where rounding is delicate: ties, their neighbours, integers, zeros, specials.
std::vector<float> tricky_values() {
  std::vector<float> v = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, -0.49999997f,
                          0.50000006f, 1.0f, -1.0f, 8388607.5f, -8388607.5f, 8388608.0f, 16777216.0f, 1e30f, -1e30f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(), 2147483648.0f, -2147483648.0f, 4294967296.0f};
  for (int k = -300; k <= 300; ++k) {
    const float h = static_cast<float>(k) * 0.5f;
    v.push_back(h);
    v.push_back(std::nextafter(h, 1e9f));
    v.push_back(std::nextafter(h, -1e9f));
  }
  return v;
}

TEST(FastRounding, PrimitivesMatchLibmOnASweepOfAllFloatBitPatterns) {
  std::vector<float> v = tricky_values();
  // Signaling NaNs are left out: the kernels only round results of arithmetic (x / s + z), which are
  // quiet, and libm's roundf quiets one where the select-based version passes it through.
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 977) {
    const uint32_t b = static_cast<uint32_t>(u);
    const bool signaling_nan = (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0 && !(b & 0x00400000u);
    if (!signaling_nan) v.push_back(from_bits(b));
  }
  std::vector<float> fast_out(v.size()), ref(v.size());
  for_each_mode([&](quant::RoundingMode m, auto mode_c) {
    constexpr quant::RoundingMode M = decltype(mode_c)::value;
    for (size_t i = 0; i < v.size(); ++i) {
      fast_out[i] = fast::round_mode<M>(v[i]);
      ref[i] = quant::apply_rounding(m, v[i]);
    }
    EXPECT_TRUE(same_bits(fast_out.data(), ref.data(), static_cast<int64_t>(v.size())));
  });
  for (size_t i = 0; i < v.size(); ++i) {
    fast_out[i] = fast::round_half_even_f(v[i]);
    ref[i] = quant::round_half_even(v[i]);
  }
  EXPECT_TRUE(same_bits(fast_out.data(), ref.data(), static_cast<int64_t>(v.size())));
}

Tensor make(const Dims& dims, const std::vector<float>& values) {
  Tensor t(DType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = values[static_cast<size_t>(i) % values.size()];
  return t;
}

// x values: random multiples of scale/2 (ties after the division), random reals, tricky values.
std::vector<float> x_values(std::mt19937& rng, float scale_hint, size_t n) {
  std::vector<float> tricky = tricky_values();
  std::uniform_real_distribution<float> real(-300.0f, 300.0f);
  std::uniform_int_distribution<int> half(-600, 600), pick(0, 3);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (pick(rng)) {
      case 0: v[i] = static_cast<float>(half(rng)) * 0.5f * scale_hint; break;
      case 1: v[i] = real(rng) * scale_hint; break;
      case 2: v[i] = tricky[static_cast<size_t>(rng() % tricky.size())]; break;
      default: v[i] = static_cast<float>(half(rng)) * 0.5f; break;
    }
  }
  return v;
}

struct Layout {
  const char* name;
  Dims x, param;
};
// Every way the scale and zero point can lie against X: per tensor, per channel on either axis,
// along the last axis (parameters vary inside a run), per element, and X itself broadcast.
const Layout kLayouts[] = {
    {"per-tensor scalar", {2, 3, 4, 5}, {}},
    {"per-tensor (1,)", {2, 3, 4, 5}, {1}},
    {"per-channel (C,1,1,1)", {3, 4, 5, 6}, {3, 1, 1, 1}},
    {"per-channel (1,C,1,1)", {2, 3, 4, 5}, {1, 3, 1, 1}},
    {"last axis (1,C)", {7, 9}, {1, 9}},
    {"last axis 1-D", {2, 3, 11}, {11}},
    {"per-element", {4, 6}, {4, 6}},
    {"x broadcast", {1, 5}, {4, 1}},
    {"x broadcast along the run", {4, 1}, {1, 5}},
};

// Quant reference: quant_code() element by element through the plain broadcast walk.
std::vector<float> quant_reference(const Dims& out, const Tensor& x, const quant::QuantParams& p) {
  const quant::IntRange range = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
  std::vector<float> y(static_cast<size_t>(checked_numel(out)));
  const float *xs = x.data<float>(), *ss = p.scale.data<float>(), *zs = p.zeropt.data<float>();
  exec::for_each_broadcast<3>(out, {&x.dims(), &p.scale.dims(), &p.zeropt.dims()}, [&](int64_t o, const auto& off) {
    const float s = ss[off[1]], z = zs[off[2]];
    y[static_cast<size_t>(o)] = (quant::quant_code(xs[off[0]], s, z, range, p) - z) * s;
  });
  return y;
}

TEST_P(FastPath, QuantMatchesScalarReferenceForEveryModeLayoutAndRange) {
  std::mt19937 rng(1234);
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(l.name);
    Dims out;
    ASSERT_TRUE(exec::broadcast_dims(l.x, l.param, &out));
    const float scales[] = {0.125f, 0.3f, 1.0f, 3.0f};
    for (float base_scale : scales) {
      Tensor x = make(l.x, x_values(rng, base_scale, static_cast<size_t>(checked_numel(l.x))));
      std::vector<float> svals, zvals;
      for (int i = 0; i < 32; ++i) {
        svals.push_back(base_scale * static_cast<float>(1 + i % 3));
        zvals.push_back(static_cast<float>(i % 4) - 1.0f + (i % 5 == 0 ? 0.5f : 0.0f));  // -1, 0, 1, 2, some .5
      }
      for (bool zero_zp : {true, false}) {
        quant::QuantParams p;
        p.scale = make(l.param, svals);
        p.zeropt = zero_zp ? make(l.param, {0.0f}) : make(l.param, zvals);
        for (int bits_ : {1, 2, 4, 8, 16, 32})
          for (bool sgn : {true, false})
            for (bool narrow : {false, true}) {
              p.bits = bits_;
              p.is_signed = sgn;
              p.narrow = narrow;
              for_each_mode([&](quant::RoundingMode m, auto) {
                p.mode = m;
                std::vector<float> ref = quant_reference(out, x, p);
                std::vector<float> y(ref.size());
                quant_into(out, x, p, y.data());
                ASSERT_TRUE(same_bits(y.data(), ref.data(), static_cast<int64_t>(ref.size())))
                    << "bits " << bits_ << " signed " << sgn << " narrow " << narrow << " zp0 " << zero_zp;
              });
            }
      }
    }
  }
}

TEST_P(FastPath, BipolarQuantMatchesReference) {
  std::mt19937 rng(7);
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(l.name);
    Dims out;
    ASSERT_TRUE(exec::broadcast_dims(l.x, l.param, &out));
    Tensor x = make(l.x, x_values(rng, 0.5f, static_cast<size_t>(checked_numel(l.x))));
    Tensor s = make(l.param, {0.25f, 3.0f, -0.5f, 1e-3f});
    std::vector<float> ref(static_cast<size_t>(checked_numel(out))), y(ref.size());
    exec::for_each_broadcast<2>(out, {&x.dims(), &s.dims()}, [&](int64_t o, const auto& off) {
      ref[static_cast<size_t>(o)] = (x.data<float>()[off[0]] >= 0.0f ? 1.0f : -1.0f) * s.data<float>()[off[1]];
    });
    bipolar_quant_into(out, x, s, y.data());
    EXPECT_TRUE(same_bits(y.data(), ref.data(), static_cast<int64_t>(ref.size())));
  }
}

TEST_P(FastPath, TruncV1AndV2MatchScalarReference) {
  std::mt19937 rng(99);
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(l.name);
    Dims out;
    ASSERT_TRUE(exec::broadcast_dims(l.x, l.param, &out));
    Tensor x = make(l.x, x_values(rng, 0.25f, static_cast<size_t>(checked_numel(l.x))));
    Tensor s = make(l.param, {0.25f, 0.5f, 0.3f});
    Tensor z = make(l.param, {0.0f, 1.0f, -2.0f, 0.5f});
    Tensor so = make(l.param, {1.0f, 2.0f, 0.7f});
    const float *xs = x.data<float>(), *ss = s.data<float>(), *zs = z.data<float>(), *os = so.data<float>();
    std::vector<float> ref(static_cast<size_t>(checked_numel(out))), y(ref.size());
    for_each_mode([&](quant::RoundingMode mode, auto) {
      for (int in_bits : {8, 12}) {
        const int out_bits = 4;
        const float shift = std::ldexp(1.0f, in_bits - out_bits);
        exec::for_each_broadcast<3>(out, {&x.dims(), &s.dims(), &z.dims()}, [&](int64_t o, const auto& off) {
          float sv = ss[off[1]], zv = zs[off[2]];
          float t = quant::round_half_even(xs[off[0]] / sv + zv) / shift;
          ref[static_cast<size_t>(o)] = (quant::apply_rounding(mode, t) - zv) * sv;
        });
        trunc_v1_into(out, x, s, z, in_bits, out_bits, mode, y.data());
        ASSERT_TRUE(same_bits(y.data(), ref.data(), static_cast<int64_t>(ref.size()))) << "v1 in_bits " << in_bits;
      }
      for (bool sgn : {true, false}) {
        const quant::IntRange range = quant::quant_int_range(4, sgn, false);
        exec::for_each_broadcast<4>(out, {&x.dims(), &s.dims(), &z.dims(), &so.dims()}, [&](int64_t o, const auto& off) {
          float sv = ss[off[1]], zv = zs[off[2]], sov = os[off[3]];
          float k = std::ldexp(1.0f, static_cast<int>(quant::round_half_even(std::log2(sov / sv))));
          float t = quant::round_half_even(xs[off[0]] / sv + zv) / k;
          if (t > range.max) t = range.max;
          if (t < range.min) t = range.min;
          ref[static_cast<size_t>(o)] = (quant::apply_rounding(mode, t) - zv / k) * sov;
        });
        trunc_v2_into(out, x, s, z, so, range, mode, y.data());
        ASSERT_TRUE(same_bits(y.data(), ref.data(), static_cast<int64_t>(ref.size()))) << "v2 signed " << sgn;
      }
    });
  }
}

// QuantizeLinear / DequantizeLinear references: the double-precision formulas of the ONNX spec.
template <typename T>
void check_quantize_linear(DType dt, std::mt19937& rng) {
  const int64_t outer = 3, count = 5, inner_sizes[] = {1, 7};
  for (int64_t inner : inner_sizes) {
    for (int64_t cnt : {int64_t{1}, count}) {
      const int64_t n = outer * cnt * inner;
      std::vector<float> x = x_values(rng, 0.5f, static_cast<size_t>(n));
      std::vector<float> s = {0.5f, 0.25f, 3.0f, 0.1f, 1.0f}, zf;
      std::vector<T> zt;
      for (int64_t c = 0; c < count; ++c) {
        T z = static_cast<T>(std::is_signed_v<T> ? c * 3 - 6 : c * 50);
        zt.push_back(z);
        zf.push_back(static_cast<float>(z));
      }
      std::vector<T> ref(static_cast<size_t>(n)), y(ref.size());
      const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      for (int64_t e = 0; e < n; ++e) {
        const size_t p = static_cast<size_t>(cnt == 1 ? 0 : (e / inner) % cnt);
        double v = static_cast<double>(quant::round_half_even(x[static_cast<size_t>(e)] / s[p])) + static_cast<double>(zf[p]);
        ref[static_cast<size_t>(e)] = std::isnan(v) ? T(0) : static_cast<T>(std::clamp(v, lo, hi));
      }
      quantize_linear_into(x.data(), n, s.data(), zf.data(), cnt, inner, dt, y.data());
      EXPECT_EQ(std::memcmp(y.data(), ref.data(), ref.size() * sizeof(T)), 0) << dtype_name(dt) << " inner " << inner;

      // DequantizeLinear of the codes (plus the extremes).
      std::vector<T> codes = y;
      codes[0] = std::numeric_limits<T>::lowest();
      codes[1] = std::numeric_limits<T>::max();
      std::vector<float> dref(static_cast<size_t>(n)), dy(dref.size());
      for (int64_t e = 0; e < n; ++e) {
        const size_t p = static_cast<size_t>(cnt == 1 ? 0 : (e / inner) % cnt);
        dref[static_cast<size_t>(e)] =
            static_cast<float>(static_cast<int64_t>(codes[static_cast<size_t>(e)]) - static_cast<int64_t>(zt[p])) * s[p];
      }
      dequantize_linear_into(codes.data(), dt, n, s.data(), zt.data(), cnt, inner, dy.data());
      EXPECT_TRUE(same_bits(dy.data(), dref.data(), n)) << dtype_name(dt) << " inner " << inner;
    }
  }
}

TEST_P(FastPath, QuantizeLinearMatchesDoublePrecisionReference) {
  std::mt19937 rng(5);
  check_quantize_linear<int8_t>(DType::kInt8, rng);
  check_quantize_linear<uint8_t>(DType::kUInt8, rng);
  check_quantize_linear<int16_t>(DType::kInt16, rng);
  check_quantize_linear<uint16_t>(DType::kUInt16, rng);
}

TEST_P(FastPath, DequantizeInt32WithoutZeroPoint) {
  std::vector<int32_t> x = {std::numeric_limits<int32_t>::lowest(), -1, 0, 1, 16777217, std::numeric_limits<int32_t>::max()};
  std::vector<float> s = {0.3f}, y(x.size()), ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = static_cast<float>(static_cast<int64_t>(x[i])) * s[0];
  dequantize_linear_into(x.data(), DType::kInt32, static_cast<int64_t>(x.size()), s.data(), nullptr, 1, 1, y.data());
  EXPECT_TRUE(same_bits(y.data(), ref.data(), static_cast<int64_t>(x.size())));
}

}  // namespace
}  // namespace qonnx::kernels
