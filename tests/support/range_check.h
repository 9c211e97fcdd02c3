// Soundness checks of the range analysis (qonnx/analysis/range.h) against the executor: a model's
// intervals, every exposed tensor of every run inside its interval and its channel's.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "qonnx/analysis/range.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/tensor.h"

namespace qonnx::test {

// The built model with shapes inferred (infer-shapes), so intermediates know their channels.
Result<ir::Model> with_shapes(const io::ModelBuilder& b);
// The output names of every node (to expose them all).
std::vector<std::string> all_values(const ir::Model& model);
// Every float value of every exposed tensor of `run` inside its interval and its channel's (NaN is
// outside every interval).
void expect_inside(const analysis::RangeAnalysis& a, const exec::RunResult& run, const std::string& what);

// Uniform float32 values in [lo, hi] (rounded to integers when `integral`).
Tensor random_tensor(std::mt19937& rng, const Dims& dims, float lo, float hi, bool integral);
// Adversarial and random inputs in [lo, hi]: uniform, every element at one end, each element at a
// random end, the ends and their neighbours mixed, evenly spaced values over the interval, and values
// next to the powers of two inside it (where float steps change).
std::vector<Tensor> range_probe_inputs(std::mt19937& rng, const Dims& dims, float lo, float hi, int random_count = 24);

// Analyses `model` with input "x" in [lo, hi], runs it on `inputs` with every value exposed and checks
// each against its interval; returns the analysis (for further checks) or the first failure.
Result<analysis::RangeAnalysis> check_sound(const ir::Model& model, float lo, float hi, const std::vector<Tensor>& inputs,
                                            const std::string& what);

}  // namespace qonnx::test
