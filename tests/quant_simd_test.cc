// The AVX2 and portable paths of the quantization kernels give the same bits on the same inputs:
// every rounding mode, bit widths 1..32, signed/narrow, per-tensor / per-channel / per-element
// parameters, run lengths that leave every possible tail, unaligned starts, and tie-rich and special
// values (x/s exactly k + 0.5, clamp bounds, +-0, NaN, +-inf, subnormals, huge). Then each op once
// through the registry on both paths. kernel_fastpath_test.cc checks both paths against references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/quant_avx2.h"
#include "kernels/onnx/quantize_linear.h"
#include "kernels/qonnx/fast_kernels.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/quant/rounding.h"
#include "support/simd_levels.h"
#include "support/test_util.h"

namespace qonnx::kernels {
namespace {

using test::ScopedSimdLevel;

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();
const quant::RoundingMode kModes[] = {quant::RoundingMode::kRound, quant::RoundingMode::kCeil,   quant::RoundingMode::kFloor,
                               quant::RoundingMode::kUp,    quant::RoundingMode::kDown,   quant::RoundingMode::kHalfUp,
                               quant::RoundingMode::kHalfDown};

class QuantSimd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (isa::best(isa::Family::kQuant) == isa::Isa::kPortable) GTEST_SKIP() << "this CPU has no AVX2: one path only";
  }
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Bit-identical, except that a NaN only has to meet a NaN (its sign and payload depend on which
// operand of a commutative operation the compiler put first, on either path).
::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i]) && !(std::isnan(a[i]) && std::isnan(b[i])))
      return ::testing::AssertionFailure() << "element " << i << ": avx2 " << a[i] << " (0x" << std::hex << bits(a[i])
                                           << ") vs portable " << b[i] << " (0x" << bits(b[i]) << std::dec << ")";
  return ::testing::AssertionSuccess();
}

// Runs f(output) on the portable path and on the AVX2 path; both outputs start as garbage.
template <typename T, typename F>
std::pair<std::vector<T>, std::vector<T>> both_paths(size_t n, F&& f) {
  std::vector<T> portable(n, T(77)), simd(n, T(99));
  {
    ScopedSimdLevel level(isa::Isa::kPortable);
    f(portable.data());
  }
  {
    ScopedSimdLevel level(isa::Isa::kAvx2);
    f(simd.data());
  }
  return {simd, portable};
}

// x values for scale s and zero point z: exact ties k + 0.5 after the division, their float
// neighbours, clamp bounds of every width, signed zeros, specials, subnormals, huge values, random.
std::vector<float> tie_rich(std::mt19937& rng, float s, size_t n) {
  std::vector<float> special = {0.0f, -0.0f, kInf, -kInf, kNan, -kNan, std::numeric_limits<float>::denorm_min(),
                                -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                                std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 1e30f, -1e30f,
                                8388608.0f, -8388607.5f, 0.49999997f, -0.49999997f};
  for (int b = 1; b <= 32; ++b) {
    const float p = std::ldexp(1.0f, b);
    for (float v : {p, p - 1.0f, p - 2.0f, p / 2, p / 2 - 1.0f, -p / 2, -p / 2 + 1.0f, p / 2 - 0.5f, -p / 2 - 0.5f})
      special.push_back(v * s);
  }
  std::uniform_int_distribution<int> kind(0, 4), half(-600, 600);
  std::uniform_real_distribution<float> real(-300.0f, 300.0f);
  std::uniform_int_distribution<uint32_t> any_bits;
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (kind(rng)) {
      case 0: v[i] = static_cast<float>(half(rng)) * 0.5f * s; break;
      case 1: v[i] = std::nextafter(static_cast<float>(half(rng)) * 0.5f * s, (rng() & 1) ? kInf : -kInf); break;
      case 2: v[i] = special[rng() % special.size()]; break;
      case 3: {
        const uint32_t u = any_bits(rng);
        std::memcpy(&v[i], &u, 4);
        break;
      }
      default: v[i] = real(rng) * s; break;
    }
  }
  return v;
}

Tensor tensor(const Dims& dims, const std::vector<float>& values) {
  Tensor t(DType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = values[static_cast<size_t>(i) % values.size()];
  return t;
}

// Shapes against parameter shapes: per tensor, per channel with odd inner sizes (unaligned run
// starts, every tail length), along the last axis, per element, x broadcast.
struct Layout {
  Dims x, param;
};
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  for (int64_t len : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100})
    out.push_back({{len}, {}});
  for (int64_t inner : {3, 13, 24, 37}) out.push_back({{2, 5, inner}, {1, 5, 1}});
  out.push_back({{3, 19}, {1, 19}});
  out.push_back({{6, 11}, {6, 11}});
  out.push_back({{1, 21}, {4, 1}});
  return out;
}

TEST_F(QuantSimd, QuantEveryModeWidthAndLayoutIsBitIdentical) {
  std::mt19937 rng(11);
  for (const Layout& l : layouts()) {
    Dims out;
    ASSERT_TRUE(exec::broadcast_dims(l.x, l.param, &out));
    const int64_t pn = checked_numel(l.param);
    for (float base : {1.0f, 0.375f, 0.0625f, 3.0f}) {
      Tensor x = tensor(l.x, tie_rich(rng, base, static_cast<size_t>(std::max<int64_t>(checked_numel(l.x), 1))));
      std::vector<float> sv, zv;
      for (int64_t i = 0; i < pn; ++i) {
        sv.push_back(base * static_cast<float>(1 + i % 3));
        zv.push_back(static_cast<float>(i % 5) - 2.0f + (i % 4 == 3 ? 0.5f : 0.0f));
      }
      for (bool zero_zp : {true, false}) {
        quant::QuantParams p;
        p.scale = tensor(l.param, sv);
        p.zeropt = zero_zp ? tensor(l.param, {0.0f}) : tensor(l.param, zv);
        for (int b = 1; b <= 32; ++b)
          for (bool sgn : {true, false})
            for (bool narrow : {false, true})
              for (quant::RoundingMode m : kModes) {
                if (b == 1 && sgn && m != quant::RoundingMode::kRound) continue;  // bipolar ignores the mode
                p.bits = b;
                p.is_signed = sgn;
                p.narrow = narrow;
                p.mode = m;
                auto [simd, portable] = both_paths<float>(static_cast<size_t>(checked_numel(out)),
                                                          [&](float* y) { quant_into(out, x, p, y); });
                ASSERT_TRUE(same_bits(simd, portable))
                    << dims_to_string(l.x) << " vs " << dims_to_string(l.param) << " " << quant::rounding_mode_name(m)
                    << " bits " << b << " signed " << sgn << " narrow " << narrow << " zp0 " << zero_zp;
              }
      }
    }
  }
}

// quant_bytes_run (a per-tensor Quant's floats and its activation bytes in one pass) on every vector path, with
// the floats and without: the floats (q - z) * s and the bytes q - lo of the scalar Quant, a NaN giving the
// byte of 0 and setting *bad. Run lengths leave every tail of the 16- and 8-lane loops.
TEST_F(QuantSimd, QuantBytesAreTheScalarQuantsCodesOnEveryPath) {
  struct Form {
    float s, z, lo, hi;
  };
  std::mt19937 rng(23);
  for (const Form f : {Form{0.02f, 0.0f, 0.0f, 255.0f}, Form{0.05f, 0.0f, -128.0f, 127.0f}, Form{0.1f, 3.0f, 0.0f, 15.0f},
                       Form{1.0f / 3.0f, -2.0f, -7.0f, 7.0f}})
    for (quant::RoundingMode mode : kModes)
      for (int64_t n : {1, 7, 8, 15, 16, 17, 24, 31, 33, 40, 1000}) {
        SCOPED_TRACE(testing::Message() << "scale " << f.s << ", zero point " << f.z << ", [" << f.lo << ", " << f.hi
                                        << "], " << quant::rounding_mode_name(mode) << ", " << n << " elements");
        std::vector<float> x = tie_rich(rng, f.s, static_cast<size_t>(n));
        std::vector<float> want_y(x.size());
        std::vector<uint8_t> want_u(x.size());
        std::vector<bool> nan_code(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          float t = x[i] / f.s + f.z;
          t = t > f.hi ? f.hi : t;
          t = t < f.lo ? f.lo : t;
          const float q = quant::apply_rounding(mode, t);
          want_y[i] = (q - f.z) * f.s;
          nan_code[i] = std::isnan(q);
          want_u[i] = static_cast<uint8_t>(std::isnan(q) ? f.z - f.lo : q - f.lo);
        }
        for (isa::Isa level : test::simd_levels()) {
          if (level == isa::Isa::kPortable) continue;  // quant_bytes_run is the vector loops only
          ScopedSimdLevel scoped(level);
          for (bool floats : {true, false}) {
            std::vector<float> y(x.size(), 7.0f);
            std::vector<uint8_t> u(x.size(), 99);
            int bad = 0;
            const int64_t done = avx2::quant_bytes_run(mode, x.data(), f.s, f.z, f.lo, f.hi, floats ? y.data() : nullptr,
                                                       u.data(), &bad, n);
            ASSERT_EQ(done, n / 8 * 8) << isa::name(level);
            EXPECT_EQ(bad != 0, std::find(nan_code.begin(), nan_code.begin() + done, true) != nan_code.begin() + done)
                << isa::name(level);
            EXPECT_EQ(std::vector<uint8_t>(u.begin(), u.begin() + done), std::vector<uint8_t>(want_u.begin(), want_u.begin() + done))
                << isa::name(level) << (floats ? "" : ", no floats");
            if (floats)
              EXPECT_TRUE(same_bits(std::vector<float>(y.begin(), y.begin() + done), std::vector<float>(want_y.begin(), want_y.begin() + done)))
                  << isa::name(level);
            else
              EXPECT_EQ(y, std::vector<float>(x.size(), 7.0f)) << isa::name(level) << ": floats written";
          }
        }
      }
}

TEST_F(QuantSimd, RoundingOfEveryFloatClassIsBitIdentical) {
  // Scale 1, zero point 0, 32 bits: the codes are the rounded inputs for |x| < 2^31, over a sweep of
  // float bit patterns (stride 997: every exponent, both signs, NaN payloads, subnormals).
  std::vector<float> v;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 997) {
    float f;
    const uint32_t b = static_cast<uint32_t>(u);
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  Tensor x = tensor({static_cast<int64_t>(v.size())}, v);
  quant::QuantParams p;
  p.scale = tensor({}, {1.0f});
  p.zeropt = tensor({}, {0.0f});
  p.bits = 32;
  for (quant::RoundingMode m : kModes) {
    p.mode = m;
    auto [simd, portable] = both_paths<float>(v.size(), [&](float* y) { quant_into(x.dims(), x, p, y); });
    EXPECT_TRUE(same_bits(simd, portable)) << quant::rounding_mode_name(m);
  }
}

TEST_F(QuantSimd, BipolarQuantAndTruncAreBitIdentical) {
  std::mt19937 rng(12);
  for (const Layout& l : layouts()) {
    Dims out;
    ASSERT_TRUE(exec::broadcast_dims(l.x, l.param, &out));
    const size_t n = static_cast<size_t>(checked_numel(out));
    Tensor x = tensor(l.x, tie_rich(rng, 0.25f, static_cast<size_t>(std::max<int64_t>(checked_numel(l.x), 1))));
    Tensor s = tensor(l.param, {0.25f, 0.5f, 0.3f, -2.0f});
    Tensor z = tensor(l.param, {0.0f, 1.0f, -2.0f, 0.5f});
    auto [bs, bp] = both_paths<float>(n, [&](float* y) { bipolar_quant_into(out, x, s, y); });
    ASSERT_TRUE(same_bits(bs, bp)) << "BipolarQuant " << dims_to_string(l.x);
    Tensor s_pos = tensor(l.param, {0.25f, 0.5f, 0.3f});
    for (quant::RoundingMode m : kModes) {
      for (int in_bits : {1, 4, 8, 32}) {
        for (int out_bits : {1, 4, 8, 32}) {
          auto [ts, tp] = both_paths<float>(
              n, [&](float* y) { trunc_v1_into(out, x, s_pos, z, in_bits, out_bits, m, y); });
          ASSERT_TRUE(same_bits(ts, tp)) << "Trunc v1 " << dims_to_string(l.x) << " " << quant::rounding_mode_name(m) << " "
                                         << in_bits << "->" << out_bits;
        }
      }
      // out_scale / scale ratios giving Trunc v2 steps k = 2^e from 2^-138 (subnormal: no float
      // inverse) to 2^101.
      for (float so_base : {1.0f, 0.7f, 1e-30f, 1e30f, 3e-39f, 1e-42f}) {
        Tensor so = tensor(l.param, {so_base, 2.0f * so_base, 0.7f * so_base});
        for (int out_bits : {1, 2, 8, 32})
          for (bool sgn : {true, false})
            for (bool narrow : {false, true}) {
              const quant::IntRange range = quant::quant_int_range(out_bits, sgn, narrow);
              auto [ts, tp] = both_paths<float>(n, [&](float* y) { trunc_v2_into(out, x, s_pos, z, so, range, m, y); });
              ASSERT_TRUE(same_bits(ts, tp)) << "Trunc v2 " << dims_to_string(l.x) << " " << quant::rounding_mode_name(m)
                                             << " out_scale " << so_base << " bits " << out_bits << " signed " << sgn
                                             << " narrow " << narrow;
            }
      }
    }
  }
}

template <typename T>
void check_quantize_linear(DType dt) {
  std::mt19937 rng(13);
  // Unaligned starts: the kernels read from x.data() + offset.
  for (int64_t offset : {0, 1, 3}) {
    for (int64_t n : {0, 5, 8, 29, 64, 203}) {
      for (int64_t count : {1, 3, 7}) {
        for (int64_t inner : {1, 5, 9}) {
          if (count > 1 && n % (count * inner) != 0) continue;
          std::vector<float> xbuf = tie_rich(rng, 0.5f, static_cast<size_t>(n + offset + 1));
          std::vector<float> s = {0.5f, 0.25f, 3.0f, 0.1f, 1.0f, 1e-20f, 7.0f}, zf;
          std::vector<T> zt;
          for (int64_t c = 0; c < 7; ++c) {
            zt.push_back(static_cast<T>(std::is_signed_v<T> ? c * 3 - 9 : c * 40));
            zf.push_back(static_cast<float>(zt.back()));
          }
          for (bool with_zp : {true, false}) {
            auto [qs, qp] = both_paths<T>(static_cast<size_t>(n), [&](T* y) {
              quantize_linear_into(xbuf.data() + offset, n, s.data(), with_zp ? zf.data() : nullptr, count, inner, dt, y);
            });
            ASSERT_EQ(qs, qp) << dtype_name(dt) << " n " << n << " count " << count << " inner " << inner;
            std::vector<T> codes(static_cast<size_t>(n + offset));
            for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<T>(rng());
            auto [ds, dp] = both_paths<float>(static_cast<size_t>(n), [&](float* y) {
              dequantize_linear_into(codes.data() + offset, dt, n, s.data(), with_zp ? zt.data() : nullptr, count,
                                     inner, y);
            });
            ASSERT_TRUE(same_bits(ds, dp)) << dtype_name(dt) << " n " << n << " count " << count << " inner " << inner;
          }
        }
      }
    }
  }
}

TEST_F(QuantSimd, QuantizeAndDequantizeLinearAreBitIdentical) {
  check_quantize_linear<int8_t>(DType::kInt8);
  check_quantize_linear<uint8_t>(DType::kUInt8);
  check_quantize_linear<int16_t>(DType::kInt16);
  check_quantize_linear<uint16_t>(DType::kUInt16);
}

TEST_F(QuantSimd, MultiThresholdIsBitIdenticalForEveryLayout) {
  std::mt19937 rng(14);
  // Thresholds in double, some not representable in float32 (0.1, 1/3, beyond the float range),
  // with +-inf and NaN; v holds the float32 neighbours of each threshold.
  std::vector<double> pool = {0.1, -0.1, 1.0 / 3, 0.0, -0.0, 1.5, 2.5, -7.25, 1e39, -1e39,
                              std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN(), 3.4028235677973366e38, 1e-45, -1e-46};
  std::vector<float> vpool = {kNan, kInf, -kInf, 0.0f, -0.0f, std::numeric_limits<float>::max(),
                              -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()};
  for (double t : pool) {
    if (std::isnan(t) || std::isinf(t) || std::fabs(t) > 3.4e38) continue;
    const float f = static_cast<float>(t);
    vpool.insert(vpool.end(), {f, std::nextafter(f, kInf), std::nextafter(f, -kInf)});
  }
  struct Shape {
    int64_t outer, channels, inner;
  };
  const Shape shapes[] = {{1, 1, 0},  {2, 3, 1},  {4, 8, 1},  {3, 13, 1}, {2, 37, 1}, {1, 5, 5},
                          {2, 3, 16}, {2, 4, 35}, {1, 2, 64}, {7, 1, 1},  {1, 300, 1}};
  for (const Shape& sh : shapes) {
    const int64_t n = sh.outer * sh.channels * sh.inner;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = (rng() % 4 == 0) ? static_cast<float>(static_cast<int>(rng() % 21) - 10) * 0.25f
                                            : vpool[rng() % vpool.size()];
    for (int64_t steps : {0, 1, 3, 15, 40}) {
      for (bool global : {true, false}) {
        std::vector<double> thr(static_cast<size_t>((global ? 1 : sh.channels) * steps));
        for (double& t : thr) t = (rng() % 3 == 0) ? static_cast<double>(static_cast<int>(rng() % 21) - 10) * 0.25
                                                   : pool[rng() % pool.size()];
        for (float scale : {1.0f, 0.3f}) {
          auto [ms, mp] = both_paths<float>(static_cast<size_t>(n), [&](float* y) {
            multithreshold_into(v.data(), sh.outer, sh.channels, sh.inner, thr.data(), global, steps, scale, -0.7f, y);
          });
          ASSERT_TRUE(same_bits(ms, mp)) << sh.outer << "x" << sh.channels << "x" << sh.inner << " steps " << steps
                                         << " global " << global;
        }
      }
    }
  }
}

// Each op through the registry on both paths (what `exec` and the folding passes run).
TEST_F(QuantSimd, KernelsThroughTheRegistryGiveTheSameBitsOnBothPaths) {
  std::mt19937 rng(15);
  const char* general = "qonnx.custom_op.general";
  Tensor x = tensor({2, 3, 29}, tie_rich(rng, 0.5f, 2 * 3 * 29));
  Tensor scale = tensor({1, 3, 1}, {0.5f, 0.25f, 0.375f});
  Tensor zeropt = tensor({1, 3, 1}, {0.0f, 1.0f, -2.0f});
  std::vector<test::NodeCase> cases;
  for (quant::RoundingMode m : kModes) {
    test::NodeCase c;
    c.op = "Quant";
    c.domain = general;
    c.inputs = {x, scale, zeropt, test::f32s(4.0f)};
    c.attrs = [m](io::NodeBuilder& n) { n.attr("rounding_mode", quant::rounding_mode_name(m)).attr("narrow", 1); };
    cases.push_back(c);
  }
  test::NodeCase bipolar;
  bipolar.op = "BipolarQuant";
  bipolar.domain = general;
  bipolar.inputs = {x, scale};
  cases.push_back(bipolar);
  test::NodeCase trunc1;
  trunc1.op = "Trunc";
  trunc1.domain = general;
  trunc1.inputs = {x, scale, zeropt, test::f32s(8.0f), test::f32s(3.0f)};
  trunc1.attrs = [](io::NodeBuilder& n) { n.attr("rounding_mode", "HALF_DOWN"); };
  cases.push_back(trunc1);
  test::NodeCase trunc2 = trunc1;
  trunc2.imports = {{general, 2}};
  trunc2.inputs = {x, scale, zeropt, test::f32s(8.0f), test::f32s(2.0f), test::f32s(3.0f)};
  cases.push_back(trunc2);
  test::NodeCase q;
  q.op = "QuantizeLinear";
  q.inputs = {x, test::f32({3}, {0.5f, 0.25f, 0.375f}), test::make<int8_t>(DType::kInt8, {3}, {0, 2, -4})};
  cases.push_back(q);
  test::NodeCase dq;
  dq.op = "DequantizeLinear";
  std::vector<uint8_t> codes(2 * 3 * 29);
  for (uint8_t& c : codes) c = static_cast<uint8_t>(rng());
  dq.inputs = {test::make<uint8_t>(DType::kUInt8, {2, 3, 29}, codes), test::f32({3}, {0.5f, 0.25f, 0.375f}),
               test::make<uint8_t>(DType::kUInt8, {3}, {0, 128, 7})};
  cases.push_back(dq);
  test::NodeCase mt;
  mt.op = "MultiThreshold";
  mt.domain = general;
  mt.inputs = {x, test::f32({29, 3}, tie_rich(rng, 0.5f, 29 * 3))};
  mt.attrs = [](io::NodeBuilder& n) { n.attr("out_dtype", "UINT2").attr("data_layout", "NHWC").attr("out_scale", 0.5f); };
  cases.push_back(mt);

  for (const test::NodeCase& c : cases) {
    SCOPED_TRACE(c.op);
    auto run = [&](isa::Isa level) {
      ScopedSimdLevel scoped(level);
      auto r = test::run_node(c);
      EXPECT_TRUE(r.is_ok()) << r.status().to_string();
      return r.is_ok() ? exec::cast_tensor(r.value()[0], DType::kFloat).value() : Tensor();
    };
    const Tensor a = run(isa::Isa::kAvx2);
    const Tensor b = run(isa::Isa::kPortable);
    ASSERT_EQ(a.numel(), b.numel());
    EXPECT_TRUE(same_bits(test::values_f32(a), test::values_f32(b)));
  }
}

}  // namespace
}  // namespace qonnx::kernels
