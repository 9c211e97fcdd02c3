// `convert --check`: runs two models on the same seeded random inputs and compares their outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qonnx/exec/arithmetic.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::analysis {

struct OutputCheck {
  std::string name;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatches = 0;
  int64_t elements = 0;  // compared, over all runs
  bool ok = true;
  std::string problem;  // shape or dtype difference
};

struct CheckOptions {
  int runs = 8;
  uint64_t seed = 0;
  double atol = 1e-6;
  double rtol = 1e-5;
  // Both models run with it. Float by default: a conversion that folds a weight quantizer (fold, cleanup)
  // removes the integer form its layer's integer path needs, so under kInt the two would differ in the
  // last bits for a reason that is not the conversion's (docs/arithmetic.md).
  exec::Arithmetic arithmetic = exec::Arithmetic::kFloat;
};

// Both models must have the same runtime inputs and the same number of outputs.
Result<std::vector<OutputCheck>> check_equivalence(const ir::Model& original, const ir::Model& converted,
                                                   const CheckOptions& options);

}  // namespace qonnx::analysis
