// Running the quantization kernels on each instruction-set path (kernels/qonnx/simd_dispatch.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "kernels/qonnx/simd_dispatch.h"

namespace qonnx::test {

// Every level this CPU runs, portable first.
inline std::vector<kernels::SimdLevel> simd_levels() {
  std::vector<kernels::SimdLevel> levels = {kernels::SimdLevel::kPortable};
  if (kernels::simd_level_supported() == kernels::SimdLevel::kAvx2) levels.push_back(kernels::SimdLevel::kAvx2);
  return levels;
}

// Selects a level for the current scope.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(kernels::SimdLevel level) : previous_(kernels::set_simd_level(level)) {}
  ~ScopedSimdLevel() { kernels::set_simd_level(previous_); }
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;

 private:
  kernels::SimdLevel previous_;
};

// For INSTANTIATE_TEST_SUITE_P name generators.
inline std::string simd_level_param_name(kernels::SimdLevel level) { return kernels::simd_level_name(level); }

}  // namespace qonnx::test

namespace qonnx::kernels {
// gtest prints test parameters with this (found by argument-dependent lookup).
inline void PrintTo(SimdLevel level, std::ostream* os) { *os << simd_level_name(level); }
}  // namespace qonnx::kernels
