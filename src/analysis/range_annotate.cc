// finn_datatype annotations from the range analysis (qonnx-cc range --annotate, issue 25), in the form
// FINN's MinimizeAccumulatorWidth leaves them. An annotation is a claim about every value of a tensor,
// so only tensors whose values are the integers themselves are annotated.
#include <algorithm>
#include <cmath>
#include <set>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"

namespace qonnx::analysis {

namespace {

// The integer range of a tensor whose values are its integers (one scale, 1, zero point 0).
std::optional<std::pair<int64_t, int64_t>> integer_values(const RangeAnalysis& a, const std::string& tensor) {
  auto it = a.tensors.find(tensor);
  if (it == a.tensors.end() || !it->second.scaled_int) return std::nullopt;
  const ScaledInt& s = *it->second.scaled_int;
  const auto is = [](double want) { return [want](double v) { return v == want; }; };
  if (!std::all_of(s.scale.begin(), s.scale.end(), is(1.0)) || !std::all_of(s.zero_point.begin(), s.zero_point.end(), is(0.0)))
    return std::nullopt;
  return std::pair{*std::min_element(s.lo.begin(), s.lo.end()), *std::max_element(s.hi.begin(), s.hi.end())};
}

std::optional<Tensor> constant_float(const ir::Graph& g, const ir::Value* v) {
  if (!v || !v->is_initializer()) return std::nullopt;
  auto stored = g.initializer_tensor(v);
  auto f = stored.is_ok() ? exec::cast_tensor(stored.value(), DType::kDouble) : Result<Tensor>(stored.status());
  if (!f.is_ok()) return std::nullopt;
  return std::move(f).value();
}

// The output of a linear layer is its accumulator when the input is its integers, the weight its codes
// and there is no bias (or a zero one); the value range then covers float32's rounding of large sums.
bool output_is_accumulator(const ir::Model& model, const RangeAnalysis& a, const ir::Node& node) {
  if (!integer_values(a, node.input(0)->name())) return false;
  auto weight = linear_weight(model, node);
  if (!weight) return false;
  const float* v = weight->value.data<float>();
  const float* c = weight->codes.data<float>();
  for (int64_t i = 0; i < weight->value.numel(); ++i)
    if (v[i] != c[i]) return false;
  if (node.op_type() != "MatMul" && node.inputs().size() > 2 && node.input(2) && !node.input(2)->name().empty()) {
    auto bias = constant_float(model.graph(), node.input(2));
    if (!bias) return false;
    const double* b = bias->data<double>();
    if (std::any_of(b, b + bias->numel(), [](double x) { return x != 0; })) return false;
  }
  return true;
}

}  // namespace

int annotate_ranges(ir::Model& model, const RangeAnalysis& a) {
  ir::Graph& g = model.graph();
  std::set<std::string> written;  // an accumulator output may also be a MultiThreshold input
  for (const Accumulator& acc : a.accumulators) {
    const ir::Value* y = g.find_value(acc.output);
    if (!y || !y->producer() || !output_is_accumulator(model, a, *y->producer())) continue;
    // The float32 sum rounds beyond 2^24: the value range (sound, integral ends here) may be wider.
    double lo = static_cast<double>(acc.min), hi = static_cast<double>(acc.max);
    if (auto it = a.tensors.find(acc.output); it != a.tensors.end()) {
      lo = std::min(lo, std::floor(it->second.all.lo));
      hi = std::max(hi, std::ceil(it->second.all.hi));
    }
    if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
    g.set_finn_datatype(acc.output, ir::smallest_integer_datatype(lo, hi).name);
    written.insert(acc.output);
  }
  for (const ThresholdWidth& t : a.thresholds) {
    auto in = integer_values(a, t.input);
    if (!in || !t.note.empty()) continue;
    g.set_finn_datatype(t.input, ir::smallest_integer_datatype(static_cast<double>(in->first), static_cast<double>(in->second)).name);
    written.insert(t.input);
    // FINN's Thresholding: one type for the input range and the threshold values (when integral).
    auto thr = constant_float(g, g.find_value(t.thresholds));
    if (!thr) continue;
    const double* p = thr->data<double>();
    double lo = static_cast<double>(in->first), hi = static_cast<double>(in->second);
    bool integral = true;
    for (int64_t i = 0; i < thr->numel(); ++i) {
      integral = integral && std::isfinite(p[i]) && p[i] == std::floor(p[i]);
      lo = std::min(lo, p[i]);
      hi = std::max(hi, p[i]);
    }
    if (!integral || lo < -9.0e18 || hi > 9.0e18) continue;
    g.set_finn_datatype(t.thresholds, ir::smallest_integer_datatype(lo, hi).name);
    written.insert(t.thresholds);
  }
  return static_cast<int>(written.size());
}

}  // namespace qonnx::analysis
