#include "kernels/qonnx/simd_dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace qonnx::kernels {
namespace {

SimdLevel detect() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) return SimdLevel::kAvx2;
#endif
  return SimdLevel::kPortable;
}

SimdLevel capped(SimdLevel wanted) {
  const SimdLevel best = simd_level_supported();
  return static_cast<int>(wanted) < static_cast<int>(best) ? wanted : best;
}

SimdLevel from_environment() {
  const char* env = std::getenv("QONNX_SIMD");
  if (env && std::strcmp(env, "portable") == 0) return SimdLevel::kPortable;
  return simd_level_supported();
}

std::atomic<SimdLevel>& current() {
  static std::atomic<SimdLevel> level{from_environment()};
  return level;
}

}  // namespace

SimdLevel simd_level_supported() {
  static const SimdLevel best = detect();
  return best;
}

SimdLevel simd_level() { return current().load(std::memory_order_relaxed); }

SimdLevel set_simd_level(SimdLevel level) { return current().exchange(capped(level), std::memory_order_relaxed); }

const char* simd_level_name(SimdLevel level) { return level == SimdLevel::kAvx2 ? "avx2" : "portable"; }

}  // namespace qonnx::kernels
