// Where ONNX leaves an op's float arithmetic open, the kernels compute what onnxruntime's CPU provider
// computes (docs/ort-arithmetic.md lists the ops and formulas), so results compare equal with `==`.
// These are the building blocks: the orders in which onnxruntime's Eigen and MLAS code add, and MLAS's
// approximations. Written from their published descriptions; std::fma is exact everywhere, so nothing
// here depends on the machine.
#pragma once

#include <cmath>
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

// eigen_sum over n values read from memory at p, whose first element has index `offset` in a buffer
// that starts 16-byte aligned (onnxruntime's allocations and numpy's arrays do).
template <typename T>
T eigen_sum_of(const T* p, int64_t n, int64_t offset) {
  constexpr int64_t P = 16 / sizeof(T);
  return eigen_sum<T>(n, (P - offset % P) % P, [p](int64_t i) { return p[i]; });
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

}  // namespace qonnx::kernels::ort
