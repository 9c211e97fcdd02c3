// Process-wide thread count for the heavy kernels (the GEMM core behind MatMul, Gemm and Conv).
// `qonnx-cc exec --threads N` sets it; the default is 1. Kernels split only independent output
// elements across threads, never a reduction, so results are bit-identical for every count.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>

namespace qonnx::exec {

namespace detail {
inline std::atomic<int>& thread_count() {
  static std::atomic<int> n{1};
  return n;
}
}  // namespace detail

// n <= 0 means every hardware thread.
inline void set_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  detail::thread_count().store(n, std::memory_order_relaxed);
}

inline int threads() { return detail::thread_count().load(std::memory_order_relaxed); }

}  // namespace qonnx::exec
