// Process-wide thread count for the heavy kernels (the GEMM core behind MatMul, Gemm and Conv).
// `qonnx-cc exec --threads N` sets it; the default is 1. Kernels split only independent output
// elements across threads, never a reduction, so results are bit-identical for every count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace qonnx::exec {

// Multiply-adds worth starting a thread for (a thread start costs some 20 us).
constexpr int64_t kDefaultMinWorkPerThread = int64_t{1} << 17;

namespace detail {
inline std::atomic<int>& thread_count() {
  static std::atomic<int> n{1};
  return n;
}
inline std::atomic<int64_t>& min_work_per_thread() {
  static std::atomic<int64_t> n{kDefaultMinWorkPerThread};
  return n;
}
}  // namespace detail

// n <= 0 means every hardware thread.
inline void set_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  detail::thread_count().store(n, std::memory_order_relaxed);
}

inline int threads() { return detail::thread_count().load(std::memory_order_relaxed); }

// Work below which parallel_for keeps a share on the calling thread (default
// kDefaultMinWorkPerThread). Tests lower it to 1 so that small cases split too.
inline void set_min_work_per_thread(int64_t n) {
  detail::min_work_per_thread().store(std::max<int64_t>(n, 1), std::memory_order_relaxed);
}

// Calls body(u0, u1) on contiguous shares of the units [0, units), one share per thread, up to
// threads() of them (the caller runs the first). `work_per_unit` estimates a unit's multiply-adds:
// jobs too small to repay starting a thread stay on the calling thread. The body must give each unit
// the same result whatever share it lands in.
template <typename Body>
void parallel_for(int64_t units, int64_t work_per_unit, Body&& body) {
  if (units <= 0) return;
  const int64_t min_work = detail::min_work_per_thread().load(std::memory_order_relaxed);
  const int64_t work = units * std::clamp<int64_t>(work_per_unit, 1, min_work);  // no overflow
  const int64_t t = std::min<int64_t>({threads(), units, std::max<int64_t>(1, work / min_work)});
  if (t <= 1) {
    body(int64_t{0}, units);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(t - 1));
  for (int64_t w = 1; w < t; ++w) workers.emplace_back([&body, units, t, w] { body(units * w / t, units * (w + 1) / t); });
  body(int64_t{0}, units / t);
  for (auto& th : workers) th.join();
}

}  // namespace qonnx::exec
