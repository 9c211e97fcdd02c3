// The bit width the thresholds of each MultiThreshold need over its input's integer range (issue 25).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"

namespace qonnx::analysis {

namespace {

// The input's integers as the kernel sees them: n in [lo, hi], value float32(n * scale).
struct IntegerInput {
  int64_t lo = 0, hi = 0;
  double scale = 1;
};

// The integer equivalent of threshold t: the smallest n in [lo, hi] whose value the kernel's
// `double(v) >= t` counts, else hi + 1. float32(n * scale) never decreases in n (scale > 0), so the
// crossing n form a suffix of [lo, hi] and a binary search finds where it starts.
int64_t integer_threshold(const IntegerInput& in, double t) {
  auto crosses = [&](int64_t n) {
    const float v = static_cast<float>(static_cast<double>(n) * in.scale);  // exact product, one rounding
    return static_cast<double>(v) >= t;
  };
  int64_t lo = in.lo, hi = in.hi + 1;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (crosses(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// The integer input of row `row` of a (rows, steps) thresholds tensor, or why there is none: the
// row's channel when the integer form is per channel along the rows' axis, else the hull of the
// channels (sound for every element when they share one scale).
Result<IntegerInput> row_input(const ScaledInt& si, int64_t rows, int64_t row, bool channels_last) {
  constexpr int64_t kLimit = int64_t{1} << 24;  // n * scale is then an exact double product
  const bool per_channel = si.lo.size() > 1;
  IntegerInput in;
  if (per_channel && !channels_last && static_cast<int64_t>(si.lo.size()) == rows) {
    const size_t c = static_cast<size_t>(row);
    in = {si.lo[c], si.hi[c], si.scale[si.scale.size() == 1 ? 0 : c]};
  } else if (!si.scale.empty() && std::all_of(si.scale.begin(), si.scale.end(), [&](double s) { return s == si.scale[0]; })) {
    in = {*std::min_element(si.lo.begin(), si.lo.end()), *std::max_element(si.hi.begin(), si.hi.end()), si.scale[0]};
  } else {
    return Status(Code::kFailed, "the input's scale is per channel, the thresholds rows do not follow its channels");
  }
  if (!(in.scale > 0) || !std::isfinite(in.scale))
    return Status(Code::kFailed, "the input's scale is not positive");
  if (in.lo < -kLimit || in.hi > kLimit) return Status(Code::kFailed, "the input's integers exceed 2^24");
  return in;
}

ThresholdWidth width_of(const ir::Graph& g, const ir::Node& node, const RangeAnalysis& analysis) {
  ThresholdWidth w;
  w.node = node.name();
  w.input = node.input(0) ? node.input(0)->name() : "";
  w.thresholds = node.inputs().size() > 1 && node.input(1) ? node.input(1)->name() : "";
  const ir::Value* thr_value = node.inputs().size() > 1 ? node.input(1) : nullptr;
  auto stored = thr_value && thr_value->is_initializer() ? g.initializer_tensor(thr_value)
                                                         : Result<Tensor>(Status(Code::kFailed, ""));
  auto thr = stored.is_ok() ? exec::cast_tensor(stored.value(), DType::kDouble) : Result<Tensor>(stored.status());
  if (!thr.is_ok() || thr->rank() != 2) {
    w.note = "the thresholds are not a constant (rows, steps) tensor";
    return w;
  }
  auto it = analysis.tensors.find(w.input);
  if (it == analysis.tensors.end() || !it->second.scaled_int) {
    w.note = "the input has no integer form: the thresholds stay real numbers";
    return w;
  }
  const std::string layout = node.attr_string("data_layout", "NCHW");
  const bool channels_last = !layout.empty() && layout.back() == 'C';
  const int64_t rows = thr->dim(0), steps = thr->dim(1);
  const double* t = thr->data<double>();
  bool first = true;
  for (int64_t row = 0; row < rows; ++row) {
    auto in = row_input(*it->second.scaled_int, rows, row, channels_last);
    if (!in.is_ok()) {
      ThresholdWidth none;
      none.node = w.node;
      none.input = w.input;
      none.thresholds = w.thresholds;
      none.note = in.status().message();
      return none;
    }
    w.input_lo = row == 0 ? in->lo : std::min(w.input_lo, in->lo);
    w.input_hi = row == 0 ? in->hi : std::max(w.input_hi, in->hi);
    std::vector<int64_t>& clipped = w.clipped.emplace_back();
    for (int64_t k = 0; k < steps; ++k) {
      const int64_t n = integer_threshold(*in, t[row * steps + k]);
      clipped.push_back(n);
      w.always_crossed += n == in->lo ? 1 : 0;
      w.never_crossed += n == in->hi + 1 ? 1 : 0;
      w.min = first ? n : std::min(w.min, n);
      w.max = first ? n : std::max(w.max, n);
      first = false;
    }
  }
  if (first) {
    w.note = "no thresholds";
    return w;
  }
  w.signed_bits = signed_bits_for(w.min, w.max);
  w.unsigned_bits = unsigned_bits_for(w.min, w.max);
  return w;
}

}  // namespace

std::vector<ThresholdWidth> threshold_widths(const ir::Model& model, const RangeAnalysis& analysis) {
  std::vector<ThresholdWidth> out;
  for (const auto& node : model.graph().nodes())
    if (dialect::classify(*node) == dialect::Op::kMultiThreshold) out.push_back(width_of(model.graph(), *node, analysis));
  return out;
}

}  // namespace qonnx::analysis
