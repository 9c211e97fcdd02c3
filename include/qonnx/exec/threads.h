// Process-wide thread count for the kernels that split their work (the GEMM core behind MatMul, Gemm
// and Conv, Transpose, channels-last pooling, the elementwise and quantization loops).
// `qonnx-cc exec --threads N` sets it; the default is 1. Kernels split only independent output
// elements across threads, never a reduction, so results are bit-identical for every count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace qonnx::exec {

// Work units (multiply-adds, or elements for memory-bound loops) worth waking a pool thread for:
// a wake-up and the share's cache misses cost a few microseconds.
constexpr int64_t kDefaultMinWorkPerThread = int64_t{1} << 15;

namespace detail {
inline std::atomic<int>& thread_count() {
  static std::atomic<int> n{1};
  return n;
}
inline std::atomic<int64_t>& min_work_per_thread() {
  static std::atomic<int64_t> n{kDefaultMinWorkPerThread};
  return n;
}

// Runs share(context, s, shares) for every s in [0, shares) on the calling thread and the pool's
// persistent workers (at most `helpers` of them), each share exactly once, and returns when all are
// done. A share goes to whichever thread claims it first, so a worker that is slow to wake costs
// nothing: the caller runs its shares. Called from inside a share (nested), from a second thread
// while the pool is busy, or with helpers == 0, it runs every share on the calling thread.
using ShareFn = void (*)(void* context, int64_t share, int64_t shares);
void run_shares(int64_t shares, int helpers, ShareFn share, void* context);
}  // namespace detail

// n <= 0 means every hardware thread.
void set_threads(int n);

inline int threads() { return detail::thread_count().load(std::memory_order_relaxed); }

// Work below which parallel_for keeps a share on the calling thread (default
// kDefaultMinWorkPerThread). Tests lower it to 1 so that small cases split too.
inline void set_min_work_per_thread(int64_t n) {
  detail::min_work_per_thread().store(std::max<int64_t>(n, 1), std::memory_order_relaxed);
}

// Calls body(u0, u1) on contiguous shares of the units [0, units) covering each unit once, spread
// over up to threads() threads (the caller is one of them). `work_per_unit` estimates a unit's cost:
// jobs too small to repay a wake-up stay on the calling thread. Which thread runs a share, and how
// many shares there are, varies: the body must give each unit the same result whatever share it
// lands in.
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
  // A few shares per thread, so that the caller can take over a late worker's part.
  constexpr int64_t kSharesPerThread = 4;
  const int64_t shares = std::min(units, t * kSharesPerThread);
  struct Job {
    Body* body;
    int64_t units;
  } job{&body, units};
  detail::run_shares(
      shares, static_cast<int>(t - 1),
      [](void* context, int64_t s, int64_t n) {
        const Job& j = *static_cast<const Job*>(context);
        (*j.body)(j.units * s / n, j.units * (s + 1) / n);
      },
      &job);
}

}  // namespace qonnx::exec
