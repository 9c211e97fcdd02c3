// Running the quantization kernels on each instruction-set path (kernels/isa/isa.h, family kQuant).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "kernels/isa/isa.h"

namespace qonnx::test {

// Every quantization path this CPU runs, portable first.
inline std::vector<kernels::isa::Isa> simd_levels() {
  using kernels::isa::Isa;
  std::vector<Isa> levels = {Isa::kPortable};
  const Isa best = kernels::isa::best(kernels::isa::Family::kQuant);
  if (best >= Isa::kAvx2) levels.push_back(Isa::kAvx2);
  if (best == Isa::kAvx512) levels.push_back(Isa::kAvx512);
  return levels;
}

// Selects the quantization path (or `family`'s) for the current scope.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(kernels::isa::Isa level, kernels::isa::Family family = kernels::isa::Family::kQuant)
      : family_(family), previous_(kernels::isa::use(family, level)) {}
  ~ScopedSimdLevel() { kernels::isa::use(family_, previous_); }
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;

 private:
  kernels::isa::Family family_;
  kernels::isa::Isa previous_;
};

// For INSTANTIATE_TEST_SUITE_P name generators.
inline std::string simd_level_param_name(kernels::isa::Isa level) { return kernels::isa::name(level); }

}  // namespace qonnx::test

namespace qonnx::kernels::isa {
// gtest prints test parameters with this (found by argument-dependent lookup).
inline void PrintTo(Isa level, std::ostream* os) { *os << name(level); }
}  // namespace qonnx::kernels::isa
