// Where ONNX leaves an op's float arithmetic open, the kernels compute what onnxruntime's CPU provider
// computes (docs/ort-arithmetic.md lists the ops and formulas), so results compare equal with `==`.
// These are the building blocks: the orders in which onnxruntime's Eigen and MLAS code add, and MLAS's
// approximations. Written from their published descriptions; std::fma is exact everywhere, so nothing
// here depends on the machine.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

namespace qonnx::kernels::ort {

// value(0) op value(1) op ... op value(n-1) (op + or *) in the order of Eigen's linear vectorized
// reduction (`.sum()`, `.mean()`, `.squaredNorm()`, `.prod()`) with 16-byte packets, as onnxruntime's
// x86-64 build uses it: P = 16 / sizeof(T) lanes. The packets start at element `aligned_from` (0 for an
// expression, the first 16-byte-aligned element for memory Eigen reads directly); two packet
// accumulators take alternate packets, then one more packet if one is left; the lanes combine as a tree
// ((l0 op l2) op (l1 op l3)); then come the elements before `aligned_from` and those after the last
// packet, in order. Fewer than P elements from `aligned_from` on are combined in order from the first.
template <typename T, typename Value, typename Op = std::plus<T>>
T eigen_reduce(int64_t n, int64_t aligned_from, Value&& value, Op op = Op{}) {
  constexpr int64_t P = 16 / sizeof(T);
  if (aligned_from > n) aligned_from = n;
  const int64_t packets = (n - aligned_from) / P;
  if (packets == 0) {
    T r = value(0);
    for (int64_t i = 1; i < n; ++i) r = op(r, value(i));
    return r;
  }
  const int64_t packets_end = aligned_from + packets * P;
  T lane0[P], lane1[P];
  for (int64_t l = 0; l < P; ++l) lane0[l] = value(aligned_from + l);
  if (packets > 1) {
    for (int64_t l = 0; l < P; ++l) lane1[l] = value(aligned_from + P + l);
    int64_t i = aligned_from + 2 * P;
    for (; i + 2 * P <= packets_end; i += 2 * P)
      for (int64_t l = 0; l < P; ++l) {
        lane0[l] = op(lane0[l], value(i + l));
        lane1[l] = op(lane1[l], value(i + P + l));
      }
    for (int64_t l = 0; l < P; ++l) lane0[l] = op(lane0[l], lane1[l]);
    if (i < packets_end)
      for (int64_t l = 0; l < P; ++l) lane0[l] = op(lane0[l], value(i + l));
  }
  for (int64_t width = P / 2; width >= 1; width /= 2)
    for (int64_t l = 0; l < width; ++l) lane0[l] = op(lane0[l], lane0[l + width]);
  T r = lane0[0];
  for (int64_t i = 0; i < aligned_from; ++i) r = op(r, value(i));
  for (int64_t i = packets_end; i < n; ++i) r = op(r, value(i));
  return r;
}

// eigen_reduce's sum (0 for n = 0).
template <typename T, typename Value>
T eigen_sum(int64_t n, int64_t aligned_from, Value&& value) {
  return n > 0 ? eigen_reduce<T>(n, aligned_from, value) : T(0);
}

// The first 16-byte-aligned element of memory whose first element has index `offset` in a buffer that
// starts 16-byte aligned (onnxruntime's allocations and numpy's arrays do): eigen_reduce's aligned_from.
template <typename T>
int64_t eigen_aligned_from(int64_t offset) {
  constexpr int64_t P = 16 / sizeof(T);
  return (P - offset % P) % P;
}

// eigen_sum over n values read from memory at p, whose first element has index `offset`.
template <typename T>
T eigen_sum_of(const T* p, int64_t n, int64_t offset) {
  return eigen_sum<T>(n, eigen_aligned_from<T>(offset), [p](int64_t i) { return p[i]; });
}

// The sum of column values value(0) .. value(k-1) as MLAS's single-row SGEMM kernel (M = 1, AVX) forms
// ones x B: rows in groups of four added in order, each group then added onto the running total
// (which starts at 0); then a group of two, then a single row.
template <typename Value>
float mlas_m1_sum(int64_t k, Value&& value) {
  float total = 0.0f;
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) total = (((value(i) + value(i + 1)) + value(i + 2)) + value(i + 3)) + total;
  if (k - i >= 2) {
    total = (value(i) + value(i + 1)) + total;
    i += 2;
  }
  if (i < k) total = value(i) + total;
  return total;
}

// The sum of p[0] .. p[n-1] as MLAS's global pooling kernel forms it: four lanes (element i in lane
// i % 4, starting from 0) over the whole groups of four, the lanes added as (l0 + l2) + (l1 + l3), then
// the remaining elements in order.
inline float mlas_lane4_sum(const float* p, int64_t n) {
  float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) lane[l] += p[i + l];
  float sum = (lane[0] + lane[2]) + (lane[1] + lane[3]);
  for (; i < n; ++i) sum += p[i];
  return sum;
}

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// exp(x) for x <= 0 as MLAS's softmax kernel computes it (the reduced-range exponential of its
// sum-of-exponentials routine): x clamped below at -88.3762626647949, m = round(x / ln 2) by the
// 1.5 * 2^23 trick, r = x - m ln 2 in two fused steps, a degree-6 polynomial in r by Horner's rule with
// fused multiply-adds, times 2^m built in the exponent bits. Results below about 2^-126 become 0.
inline float mlas_exp_nonpositive(float x) {
  constexpr float kLowerRange = -88.3762626647949f;
  constexpr float kRoundingBias = 12582912.0f;  // 1.5 * 2^23
  constexpr float kLog2Reciprocal = 1.44269504088896341f;
  constexpr float kLog2High = -6.93145752e-1f;
  constexpr float kLog2Low = -1.42860677e-6f;
  constexpr float kPoly[] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f, 0x1.fffff6p-2f, 1.0f, 1.0f};
  if (x < kLowerRange) x = kLowerRange;  // NaN stays NaN
  const float biased = std::fma(x, kLog2Reciprocal, kRoundingBias);
  const float m = biased - kRoundingBias;
  float r = std::fma(m, kLog2High, x);
  r = std::fma(m, kLog2Low, r);
  float p = kPoly[0];
  for (int i = 1; i < 7; ++i) p = std::fma(p, r, kPoly[i]);
  const uint32_t scale = (float_to_bits(biased) << 23) + 0x3F800000u;
  return p * bits_to_float(scale);
}

// Eight lane accumulators as one AVX register holds them (element j goes to lane j % 8, in order),
// added pairwise at the end: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
struct Avx8Sum {
  float lane[8] = {};
  void add(int64_t j, float v) { lane[j & 7] += v; }
  float total() const {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
};

// v * p(v^2) / q(v^2) for x clamped to [-bound, bound] (NaN stays NaN), p and q by Horner's rule in fused
// multiply-adds from their highest coefficient: the shape of MLAS's FMA3 logistic and tanh kernels.
// Always inlined, so that a loop compiled for FMA (unary_kernel_fma) computes it with fma instructions.
template <size_t P, size_t Q>
[[gnu::always_inline]] inline float mlas_odd_rational(float x, float bound, const float (&p_coeffs)[P], const float (&q_coeffs)[Q]) {
  float v = x < -bound ? -bound : x;
  v = v > bound ? bound : v;
  const float v2 = v * v;
  float p = std::fma(v2, p_coeffs[0], p_coeffs[1]);
  for (size_t i = 2; i < P; ++i) p = std::fma(v2, p, p_coeffs[i]);
  float q = std::fma(v2, q_coeffs[0], q_coeffs[1]);
  for (size_t i = 2; i < Q; ++i) q = std::fma(v2, q, q_coeffs[i]);
  return (v * p) / q;
}

// The logistic function as MLAS's FMA3 kernel computes it (onnxruntime's float Sigmoid): on [-18, 18]
// an odd degree-9 over even degree-10 rational function, plus 1/2, clamped below at 0. Absolute error
// about 1e-7: the relative error grows for very negative x, where the result reaches 0 near x = -18.
inline float mlas_logistic(float x) {
  static constexpr float kP[] = {4.37031012579801e-11f, 1.15627324459942e-07f, 6.08574864600143e-05f, 8.51377133304701e-03f,
                                 2.48287947061529e-01f};
  static constexpr float kQ[] = {6.10247389755681e-13f, 5.76102136993427e-09f, 6.29106785017040e-06f, 1.70198817374094e-03f,
                                 1.16817656904453e-01f, 9.93151921023180e-01f};
  const float r = mlas_odd_rational(x, 18.0f, kP, kQ) + 0.5f;
  return r < 0.0f ? 0.0f : r;
}

// tanh(x) as MLAS's FMA3 kernel computes it (onnxruntime's float Tanh): on [-9, 9] an odd degree-13 over
// even degree-6 rational function (Eigen's coefficients).
inline float mlas_tanh(float x) {
  static constexpr float kP[] = {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                                 1.48572235717979e-05f,  6.37261928875436e-04f, 4.89352455891786e-03f};
  static constexpr float kQ[] = {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f};
  return mlas_odd_rational(x, 9.0f, kP, kQ);
}

// erf(x) as MLAS's FMA3 kernel computes it (onnxruntime's float Erf and Gelu): on |x| (clamped to 3.925,
// where erf is 1 in float) below 0.921875 an odd polynomial |x| + |x| p(x^2); from there on
// 1 - exp(-(|x| + |x| q(|x|))) with the exponential by range reduction to [-ln2/2, ln2/2], a degree-6
// polynomial and 2^m in the exponent bits; then the sign of x. All Horner steps are fused multiply-adds.
inline float mlas_erf(float x) {
  constexpr float kSmall[] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f, 1.12818025e-1f, -3.76124859e-1f, 1.28379151e-1f};
  constexpr float kBig[] = {1.72948930e-5f, -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                            1.06777847e-1f, 6.34846687e-1f,  1.28717512e-1f};
  constexpr float kExp[] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f, 4.99999851e-1f, 1.0f, 1.0f};
  constexpr float kRoundingBias = 12582912.0f;  // 1.5 * 2^23
  const uint32_t sign = float_to_bits(x) & 0x80000000u;
  float a = std::fabs(x);
  a = a < 3.925f ? a : 3.925f;  // NaN becomes 3.925, as the kernel's min does
  float r;
  if (a < 0.921875f) {
    const float a2 = a * a;
    float p = kSmall[0];
    for (int i = 1; i < 6; ++i) p = std::fma(p, a2, kSmall[i]);
    r = std::fma(p, a, a);
  } else {
    float q = kBig[0];
    for (int i = 1; i < 7; ++i) q = std::fma(q, a, kBig[i]);
    float e = -std::fma(q, a, a);
    e = e > -88.3762626647949f ? e : -88.3762626647949f;
    const float m = std::fma(1.44269504088896341f, e, kRoundingBias) - kRoundingBias;
    float f = std::fma(m, -6.93145752e-1f, e);
    f = std::fma(m, -1.42860677e-6f, f);
    float p = kExp[0];
    for (int i = 1; i < 7; ++i) p = std::fma(p, f, kExp[i]);
    const uint32_t scale = static_cast<uint32_t>(static_cast<int32_t>(m) + 127) << 23;
    r = 1.0f - p * bits_to_float(scale);
  }
  return bits_to_float(float_to_bits(r) | sign);
}

}  // namespace qonnx::kernels::ort
