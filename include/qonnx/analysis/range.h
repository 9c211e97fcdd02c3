// Sound value ranges of every tensor of a model (qonnx-cc range, issue 25), and the exact integer
// accumulator ranges of its MatMul / Gemm / Conv layers over integer-valued inputs.
//
// Soundness is the contract: every value any execution of the qonnx-cc executor produces, for inputs in
// the given ranges (finite, not NaN), lies inside the reported interval. Ops computed elementwise by a
// monotone float32 function (quantizers, Relu, Clip, MaxPool, Add/Sub/Mul/Div of independent ranges)
// are evaluated at the interval ends with the kernel's own float32 operations, so their bounds are the
// exact extreme values. Sums (MatMul, Gemm, Conv) are bounded in double and widened by a bound on any
// float32 summation order's rounding error, then rounded outward to float32. An op not handled here
// gets its type's whole range and a note; nothing is ever narrowed on a guess.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::analysis {

struct Interval {
  double lo = 0, hi = 0;
};

// Integer-valued form of a tensor: every element equals float32(n * scale) for an integer n in [lo, hi]
// (a quantizer's output: n = code - zero point). `scale` and the integer ranges are per channel when
// the vectors hold one entry per channel (axis 1), else one entry for the whole tensor.
struct ScaledInt {
  std::vector<double> scale;
  std::vector<double> zero_point;
  std::vector<int64_t> lo, hi;
};

struct TensorRange {
  Interval all;                    // the whole tensor
  std::vector<Interval> channels;  // along axis 1 when known (empty: only `all`)
  std::optional<ScaledInt> scaled_int;
  std::string note;  // why the range is the type's whole range, or how it was narrowed less than it could be

  Interval channel(size_t c) const { return c < channels.size() ? channels[c] : all; }
};

// Exact range of the integer sum of a linear layer over integer-valued inputs: for output channel c,
// sum_k w[k, c] * n_k with w the weight codes and n_k the input's integers (zero point removed).
struct Accumulator {
  std::string node, op_type, output;
  std::vector<int64_t> lo, hi;  // per output channel
  int64_t min = 0, max = 0;     // over all channels
  int signed_bits = 0;          // smallest two's-complement width holding [min, max]
  int unsigned_bits = 0;        // smallest unsigned width, 0 when min < 0
  bool attained = false;        // some input in the box reaches min and max (no padding in the way)
  int64_t reduction = 0;        // terms per sum (K, or Cin/group * kernel area)
};

struct RangeOptions {
  // Ranges of graph inputs by name (else their finn_datatype annotation, else their type's range).
  std::map<std::string, Interval> input_ranges;
};

struct RangeAnalysis {
  std::map<std::string, TensorRange> tensors;  // every value the analysis reached, by name
  std::vector<std::string> order;              // tensor names in topological order (inputs first)
  std::vector<Accumulator> accumulators;       // graph order
};

Result<RangeAnalysis> analyze_ranges(const ir::Model& model, const RangeOptions& options);

// Smallest signed (two's complement) and unsigned bit widths holding [lo, hi]; unsigned is 0 when lo < 0.
int signed_bits_for(int64_t lo, int64_t hi);
int unsigned_bits_for(int64_t lo, int64_t hi);
// The width an accumulator needs: unsigned when it never goes negative (as FINN picks UINT / INT).
inline int accumulator_bits(const Accumulator& a) { return a.min >= 0 ? a.unsigned_bits : a.signed_bits; }

// Text report (per tensor, per channel when `per_channel`), and the same as JSON.
std::string range_text(const RangeAnalysis& analysis, bool per_channel);
std::string range_json(const RangeAnalysis& analysis, bool per_channel);
// A self-contained HTML page (src/analysis/range_html.cc): tensor intervals, integer forms and
// accumulator widths as charts, and the same as tables.
std::string range_html(const RangeAnalysis& analysis, const std::string& title);

}  // namespace qonnx::analysis
