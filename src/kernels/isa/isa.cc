#include "kernels/isa/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if QONNX_ISA_X86
#include <cpuid.h>
#endif

namespace qonnx::kernels::isa {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if QONNX_ISA_X86
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  // AVX-VNNI (CPUID leaf 7 subleaf 1, EAX bit 4) is not known to every compiler's
  // __builtin_cpu_supports; its ymm state is the one avx2 already needs from the OS.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (f.avx2 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avxvnni = (eax >> 4) & 1u;
#endif
  return f;
}

Isa highest_supported_at_or_below(Family family, Isa wanted, const CpuFeatures& cpu) {
  for (int level = static_cast<int>(wanted); level > 0; --level)
    if (supports(family, static_cast<Isa>(level), cpu)) return static_cast<Isa>(level);
  return Isa::kPortable;
}

std::atomic<Isa>& setting(Family family) {
  static std::atomic<Isa> float_isa{select(Family::kFloat, cpu_features(), std::getenv("QONNX_SIMD"))};
  static std::atomic<Isa> quant_isa{select(Family::kQuant, cpu_features(), std::getenv("QONNX_SIMD"))};
  static std::atomic<Isa> int8_isa{select(Family::kInt8, cpu_features(), std::getenv("QONNX_SIMD"))};
  switch (family) {
    case Family::kFloat: return float_isa;
    case Family::kQuant: return quant_isa;
    case Family::kInt8: break;
  }
  return int8_isa;
}

}  // namespace

CpuFeatures cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool supports(Family family, Isa isa, const CpuFeatures& cpu) {
  switch (isa) {
    case Isa::kPortable:
      return true;
    case Isa::kAvx2:
      return family == Family::kFloat ? cpu.avx2 && cpu.fma : cpu.avx2;
    case Isa::kAvxVnni:
      return family == Family::kInt8 && cpu.avx2 && cpu.avxvnni;
    case Isa::kAvx512:
      if (family == Family::kInt8) return cpu.avx2 && cpu.avx512f && cpu.avx512bw && cpu.avx512vnni;
      if (family == Family::kQuant) return cpu.avx2 && cpu.avx512f;
      return cpu.avx512f && cpu.avx2 && cpu.fma;
  }
  return false;
}

Isa select(Family family, const CpuFeatures& cpu, const char* simd_env) {
  if (family != Family::kFloat && simd_env && std::strcmp(simd_env, "portable") == 0) return Isa::kPortable;
  return highest_supported_at_or_below(family, Isa::kAvx512, cpu);
}

Isa current(Family family) { return setting(family).load(std::memory_order_relaxed); }

Isa best(Family family) { return select(family, cpu_features(), nullptr); }

Isa use(Family family, Isa isa) {
  return setting(family).exchange(highest_supported_at_or_below(family, isa, cpu_features()), std::memory_order_relaxed);
}

const char* name(Isa isa) {
  switch (isa) {
    case Isa::kPortable: return "portable";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

}  // namespace qonnx::kernels::isa
