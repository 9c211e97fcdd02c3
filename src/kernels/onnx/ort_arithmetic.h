// Where ONNX leaves an op's float arithmetic open, the kernels compute what onnxruntime's CPU provider
// computes (docs/ort-arithmetic.md lists the ops and formulas), so results compare equal with `==`.
// These are the building blocks: the orders in which onnxruntime's Eigen and MLAS code add, and MLAS's
// approximations. Written from their published descriptions; std::fma is exact everywhere, so nothing
// here depends on the machine.
#pragma once

#include <cstdint>
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

}  // namespace qonnx::kernels::ort
