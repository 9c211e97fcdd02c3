// Tensor comparison (`--expect`, `--check`, conformance) and seeded random inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

struct Comparison {
  bool shape_match = true;
  bool dtype_match = true;
  int64_t mismatches = 0;      // elements outside |a - e| <= atol + rtol * |e|
  int64_t first_mismatch = -1;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool ok() const { return shape_match && dtype_match && mismatches == 0; }
  std::string describe() const;
};

// NaN equals NaN; +-inf must match exactly; integers and bools are compared as doubles.
Comparison compare_tensors(const Tensor& actual, const Tensor& expected, double atol, double rtol);

// Random tensors for every runtime input, from its declared type: symbolic dims become
// `symbolic_dim`; floats uniform in [-1, 1), integers in [0, 10), bools fair. Same seed, same data.
Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed, int64_t symbolic_dim = 1);

// Shape choices for random inputs: `batch` > 0 replaces dim 0 of every input; `shapes` gives whole
// shapes by input name (they win over `batch`).
struct InputShapeOverrides {
  int64_t batch = 0;
  std::map<std::string, Dims> shapes;
};
Result<std::map<std::string, Tensor>> random_inputs(const ir::Graph& graph, uint64_t seed,
                                                    const InputShapeOverrides& overrides);

}  // namespace qonnx::exec
