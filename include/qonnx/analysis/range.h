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
  int64_t reduction = 0;        // terms per sum (K, or Cin/group * kernel area)
  // Set by check_witnesses only: an input was built for min and for max and the executor, run on it,
  // reached both exactly. Otherwise `not_attained` says why ("" until checked).
  bool attained = false;
  std::string not_attained;
};

// The width the thresholds of a MultiThreshold need over its input's integer form (input value
// float32(n * scale), n in [lo, hi] per channel): threshold t is crossed by exactly the n >= its integer
// equivalent, the smallest n in [lo, hi] with float32(n * scale) >= t, or hi + 1 when no n crosses it
// (a threshold at or below lo is crossed by every n: lo). These clipped integers lie in [lo, hi + 1].
struct ThresholdWidth {
  std::string node, input, thresholds;  // node name, its input tensor, its thresholds tensor
  int64_t input_lo = 0, input_hi = 0;   // the input's integer range (hull over channels)
  int64_t min = 0, max = 0;             // of the clipped integer thresholds
  int signed_bits = 0, unsigned_bits = 0;
  int64_t always_crossed = 0, never_crossed = 0;  // thresholds at or below lo, above hi
  std::vector<std::vector<int64_t>> clipped;      // per row of the thresholds tensor
  std::string note;  // why there is no integer form (then the other fields are 0 / empty)
};

struct RangeOptions {
  // Ranges of graph inputs by name (else their finn_datatype annotation, else their type's range).
  std::map<std::string, Interval> input_ranges;
};

struct RangeAnalysis {
  std::map<std::string, TensorRange> tensors;  // every value the analysis reached, by name
  std::vector<std::string> order;              // tensor names in topological order (inputs first)
  std::vector<Accumulator> accumulators;       // graph order
  std::vector<ThresholdWidth> thresholds;      // MultiThreshold nodes, graph order
};

Result<RangeAnalysis> analyze_ranges(const ir::Model& model, const RangeOptions& options);

// A linear layer's constant weight as the analysis reads it (through Quant / BipolarQuant / Transpose):
// its float32 values and its integer codes, laid out as the layer's weight input; nullopt when the
// weight has no integer codes.
struct LinearWeight {
  Tensor value, codes;
};
std::optional<LinearWeight> linear_weight(const ir::Model& model, const ir::Node& node);

// Threshold widths of every MultiThreshold with a constant (rows, steps) thresholds tensor
// (src/analysis/range_thresholds.cc; analyze_ranges fills RangeAnalysis::thresholds with it).
std::vector<ThresholdWidth> threshold_widths(const ir::Model& model, const RangeAnalysis& analysis);

// One witness: an input to the whole model meant to make a layer's accumulator reach a bound.
struct Witness {
  size_t accumulator = 0;  // index into RangeAnalysis::accumulators
  bool max = false;        // the bound: max (else min)
  int64_t bound = 0;
  bool attained = false;       // the executor's accumulator at (channel, position) equals the bound
  std::string why;             // when not attained
  int64_t channel = -1;        // output channel reaching the bound
  std::vector<int64_t> index;  // the layer output element holding it (full index, batch first)
  double value = 0;            // that element as the executor computed it
  std::string dir;             // the folder written (empty without a folder)
  std::vector<Tensor> inputs;  // one per runtime input (graph order)
};

// Builds and checks witnesses for every accumulator's min and max (src/analysis/range_witness.cc):
// each layer input element is set at the end of its range the weight's sign selects, traced back to
// the graph input through elementwise and data-movement ops, and the model is run. Sets
// `attained` / `not_attained` of each accumulator. With `dir` non-empty writes, for each attained
// bound, dir/<layer>_<min|max>/input_K.pb (K = runtime input position, exec's --input-dir layout) and
// a witness.txt naming the channel, element and values.
Result<std::vector<Witness>> check_witnesses(const ir::Model& model, RangeAnalysis& analysis, const std::string& dir);

// Writes finn_datatype annotations as FINN's MinimizeAccumulatorWidth leaves them
// (src/analysis/range_annotate.cc): the smallest INTk / UINTk on each accumulator output whose values are
// the integer accumulator itself (input scale 1, integral weights, no bias), and on MultiThreshold
// inputs (integer-valued, scale 1) and their thresholds (when integral: the hull of the input range and
// the threshold values, as FINN's Thresholding). Returns the number of tensors annotated.
int annotate_ranges(ir::Model& model, const RangeAnalysis& analysis);

// Bound on the error of a float32 sum of n terms in any order (with or without FMA), given the sum
// of the terms' magnitudes (computed in double): gamma(n) * abs_sum plus double's and subnormals' share.
double float_sum_slack(int64_t n, double abs_sum);

// Smallest signed (two's complement) and unsigned bit widths holding [lo, hi]; unsigned is 0 when lo < 0.
int signed_bits_for(int64_t lo, int64_t hi);
int unsigned_bits_for(int64_t lo, int64_t hi);
// The width an accumulator needs: unsigned when it never goes negative (as FINN picks UINT / INT).
inline int accumulator_bits(const Accumulator& a) { return a.min >= 0 ? a.unsigned_bits : a.signed_bits; }

// The text and JSON reports are in qonnx/analysis/range_report.h.
// A self-contained HTML page (src/analysis/range_html.cc): tensor intervals, integer forms and
// accumulator widths as charts, and the same as tables.
std::string range_html(const RangeAnalysis& analysis, const std::string& title);

}  // namespace qonnx::analysis
