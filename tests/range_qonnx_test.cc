// qonnx-cc's range analysis against qonnx's (qonnx/util/range_analysis.py, read, not run): the test
// re-implements qonnx's propagation rules in C++ (QonnxRules below) and runs both, and the executor, on
// generated models and the shared ones. Ours must hold every executed value; qonnx's bounds are
// checked against the same executions, and every place where qonnx's bound is tighter than ours is
// classified (docs/range.md, "Compared with qonnx").
//
// qonnx's rules, as its code has them:
// - constants are folded first (FoldConstants), so weight quantizers become float32 initializers;
// - every graph input gets the one `irange` (Python numbers: float64 in numpy);
// - "monotonic" ops (Quant, BipolarQuant, Add, Sub, Mul, Div, Relu, Clip, BatchNormalization, MaxPool,
//   AveragePool, GlobalAveragePool, Pad, Reshape, Flatten, Transpose, Concat, Split, Resize, Upsample,
//   Sigmoid, QuantizeLinear, DequantizeLinear) run once for every combination of an all-minimum and an
//   all-maximum prototype of each dynamic input (filled per channel along axis 1), in float32, and the
//   output range is the min / max along every axis but 1;
// - MatMul / Gemm / Conv: per output channel sum_k w * (w > 0 ? max : min) (and the opposite), the
//   products and the sum in numpy: float32 when the input range is float32 (any op's output), float64
//   when it is a Python number (a graph input), summed pairwise as numpy's add.reduce does; Conv
//   results go through .item() (float64); Gemm asserts transB = 1, transA = 0 and reads alpha / beta
//   (absent: an AttributeError); Conv with a bias asserts; padding is ignored;
// - other ops are skipped (a warning), and so is everything downstream of them;
// - ranges whose channels are all equal are simplified to one pair.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include <fmt/format.h>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/model_builder.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "support/range_check.h"
#include "support/test_util.h"

namespace qonnx {
namespace {
using test::random_tensor;

using analysis::Interval;

// A qonnx range: one entry (a scalar pair) or one per channel; `f32` when numpy holds it as float32.
struct QRange {
  std::vector<double> lo, hi;
  bool f32 = true;
  Interval channel(size_t c) const { return lo.size() == 1 ? Interval{lo[0], hi[0]} : Interval{lo[c], hi[c]}; }
};

// numpy's pairwise summation (umath loops_utils: blocks of 8 accumulators up to 128 elements, halves
// above), in T; the reduction adds it to the identity 0.
template <typename T>
T numpy_pairwise_sum(const T* a, size_t n) {
  if (n < 8) {
    T res = 0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

// calculate_matvec_accumulator_extremum for one row of weights: (min, max) of sum w_k * x_k.
template <typename T>
std::pair<double, double> matvec_extremum(const std::vector<float>& w, const std::vector<double>& vmin,
                                          const std::vector<double>& vmax) {
  std::vector<T> mx(w.size()), mn(w.size());
  for (size_t k = 0; k < w.size(); ++k) {
    const size_t i = vmin.size() == 1 ? 0 : k;
    const T lo = static_cast<T>(vmin[i]), hi = static_cast<T>(vmax[i]);
    mx[k] = static_cast<T>(w[k]) * (w[k] > 0 ? hi : lo);
    mn[k] = static_cast<T>(w[k]) * (w[k] > 0 ? lo : hi);
  }
  return {static_cast<double>(T(0) + numpy_pairwise_sum(mn.data(), mn.size())),
          static_cast<double>(T(0) + numpy_pairwise_sum(mx.data(), mx.size()))};
}

class QonnxRules {
 public:
  QonnxRules(const ir::Model& model, Interval irange) : model_(model), g_(model.graph()) {
    for (const ir::Value* in : g_.runtime_inputs()) ranges_[in->name()] = QRange{{irange.lo}, {irange.hi}, false};
  }

  // Runs qonnx's walk; false with `failure` set where qonnx's code would raise.
  bool run() {
    auto order = exec::topological_order(g_);
    if (!order.is_ok()) return fail(order.status().message());
    for (const ir::Node* node : order.value()) {
      if (fold(*node)) continue;
      bool inputs_ok = true;
      for (const ir::Value* v : node->inputs())
        if (dynamic(v) && !ranges_.count(v->name())) inputs_ok = false;
      if (!inputs_ok || !handled(*node)) {
        skipped_.push_back(node->op_type());
        continue;
      }
      const std::string& op = node->op_type();
      const bool ok = op == "MatMul" ? matmul(*node) : op == "Gemm" ? gemm(*node) : op == "Conv" ? conv(*node) : monotonic(*node);
      if (!ok) return false;
    }
    return true;
  }

  const std::map<std::string, QRange>& ranges() const { return ranges_; }
  const std::string& failure() const { return failure_; }
  const std::vector<std::string>& skipped() const { return skipped_; }
  bool is_dynamic(const std::string& name) const { return !folded_.count(name) && !g_.initializer(g_.find_value(name)); }

 private:
  const ir::Model& model_;
  const ir::Graph& g_;
  std::map<std::string, QRange> ranges_;
  std::map<std::string, Tensor> folded_;
  std::vector<std::string> skipped_;
  std::string failure_;

  bool fail(const std::string& why) {
    failure_ = why;
    return false;
  }
  bool dynamic(const ir::Value* v) const { return v && !v->name().empty() && is_dynamic(v->name()); }
  std::optional<Tensor> constant(const ir::Value* v) const {
    if (!v) return std::nullopt;
    if (auto it = folded_.find(v->name()); it != folded_.end()) return it->second;
    if (!g_.initializer(v)) return std::nullopt;
    auto t = g_.initializer_tensor(v);
    return t.is_ok() ? std::optional<Tensor>(t.value()) : std::nullopt;
  }
  // A weight as numpy holds it after folding: float32 (other types are not modelled).
  std::optional<Tensor> float_weight(const ir::Value* v) const {
    auto t = constant(v);
    return t && t->dtype() == DType::kFloat ? t : std::nullopt;
  }
  static bool handled(const ir::Node& node) {
    static const std::set<std::string> ops{"Transpose", "MatMul", "Conv", "Flatten", "Reshape", "Quant", "BipolarQuant",
                                           "Mul", "Sub", "Div", "Add", "BatchNormalization", "Relu", "Pad",
                                           "AveragePool", "MaxPool", "Resize", "Upsample", "GlobalAveragePool", "Gemm",
                                           "QuantizeLinear", "DequantizeLinear", "Clip", "Sigmoid", "Concat", "Split"};
    // ConvTranspose, Trunc and QuantMaxNorm (qonnx: dtype annotations from InferDataTypes) are not modelled here.
    return ops.count(node.op_type()) > 0;
  }

  // FoldConstants: a node of constants only runs once and its outputs become initializers.
  bool fold(const ir::Node& node) {
    for (const ir::Value* v : node.inputs()) {
      if (!v || v->name().empty()) continue;
      if (dynamic(v)) return false;
    }
    std::vector<std::optional<Tensor>> holder;
    std::vector<const Tensor*> ptrs;
    for (const ir::Value* v : node.inputs()) holder.push_back(v && !v->name().empty() ? constant(v) : std::nullopt);
    for (const auto& t : holder) ptrs.push_back(t ? &*t : nullptr);
    auto out = exec::evaluate_node(model_, node, ptrs);
    if (!out.is_ok()) return false;
    for (size_t i = 0; i < node.outputs().size() && i < out->size(); ++i)
      if (node.output(i)) folded_[node.output(i)->name()] = (*out)[i];
    return true;
  }

  // The float32 prototype of `v` at its range's minimum (or maximum), filled per channel along axis 1.
  std::optional<Tensor> prototype(const ir::Value* v, bool maximum) const {
    auto dims = g_.dims_of(v);
    if (!dims) return std::nullopt;
    for (auto& d : *dims) d = d < 0 ? 1 : d;
    const QRange& r = ranges_.at(v->name());
    Tensor t(DType::kFloat, *dims);
    const int64_t channels = r.lo.size() == 1 ? 1 : (dims->size() >= 2 ? (*dims)[1] : -1);
    if (channels != static_cast<int64_t>(r.lo.size())) return std::nullopt;
    const int64_t inner = channels == 1 ? 1 : t.numel() / (*dims)[0] / channels;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const Interval c = r.channel(static_cast<size_t>(channels == 1 ? 0 : (i / inner) % channels));
      t.data<float>()[i] = static_cast<float>(maximum ? c.hi : c.lo);
    }
    return t;
  }

  // simplify_range: one pair when every channel has the same range.
  static QRange simplified(QRange r) {
    const bool same = std::all_of(r.lo.begin(), r.lo.end(), [&](double v) { return v == r.lo[0]; }) &&
                      std::all_of(r.hi.begin(), r.hi.end(), [&](double v) { return v == r.hi[0]; });
    if (same) r.lo.resize(1), r.hi.resize(1);
    return r;
  }

  bool monotonic(const ir::Node& node) {
    std::vector<std::string> dyn;  // with repeats, as qonnx's list
    for (const ir::Value* v : node.inputs())
      if (dynamic(v)) dyn.push_back(v->name());
    std::map<std::string, std::array<Tensor, 2>> protos;
    for (const std::string& name : dyn) {
      auto lo = prototype(g_.find_value(name), false), hi = prototype(g_.find_value(name), true);
      if (!lo || !hi) return fail(node.name() + ": no prototype for " + name);
      protos[name] = {*lo, *hi};
    }
    std::vector<QRange> out(node.outputs().size());
    for (size_t combo = 0; combo < (size_t{1} << dyn.size()); ++combo) {
      std::map<std::string, int> pick;  // ctx[name] = ...: the last assignment of a repeated name wins
      for (size_t i = 0; i < dyn.size(); ++i) pick[dyn[i]] = (combo >> i) & 1;
      std::vector<std::optional<Tensor>> holder;
      std::vector<const Tensor*> ptrs;
      for (const ir::Value* v : node.inputs()) {
        if (dynamic(v)) holder.push_back(protos.at(v->name())[static_cast<size_t>(pick.at(v->name()))]);
        else holder.push_back(v && !v->name().empty() ? constant(v) : std::nullopt);
      }
      for (const auto& t : holder) ptrs.push_back(t ? &*t : nullptr);
      auto res = exec::evaluate_node(model_, node, ptrs);
      if (!res.is_ok()) return fail(node.name() + ": " + res.status().message());
      for (size_t o = 0; o < out.size() && o < res->size(); ++o) {
        const Tensor& t = (*res)[o];
        if (t.rank() < 2 || t.dtype() != DType::kFloat) return fail(node.name() + ": axis 1 missing or not float32");
        const int64_t channels = t.dim(1), inner = t.numel() / t.dim(0) / channels;
        if (out[o].lo.empty()) out[o] = QRange{std::vector<double>(channels, INFINITY), std::vector<double>(channels, -INFINITY), true};
        for (int64_t i = 0; i < t.numel(); ++i) {
          const size_t c = static_cast<size_t>((i / inner) % channels);
          out[o].lo[c] = std::min(out[o].lo[c], static_cast<double>(t.data<float>()[i]));
          out[o].hi[c] = std::max(out[o].hi[c], static_cast<double>(t.data<float>()[i]));
        }
      }
    }
    for (size_t o = 0; o < out.size(); ++o)
      if (node.output(o) && !out[o].lo.empty()) ranges_[node.output(o)->name()] = simplified(out[o]);
    return true;
  }

  // Rows of `w` (rows x cols, float32) against the range `in`: per row (min, max).
  static QRange matvec(const std::vector<float>& w, int64_t rows, int64_t cols, const QRange& in, bool item_to_f64) {
    QRange r{{}, {}, in.f32 && !item_to_f64};
    for (int64_t n = 0; n < rows; ++n) {
      std::vector<float> row(w.begin() + n * cols, w.begin() + (n + 1) * cols);
      auto [lo, hi] = in.f32 ? matvec_extremum<float>(row, in.lo, in.hi) : matvec_extremum<double>(row, in.lo, in.hi);
      r.lo.push_back(lo);
      r.hi.push_back(hi);
    }
    return r;
  }

  bool matmul(const ir::Node& node) {
    auto w = float_weight(node.input(1));
    if (!w || w->rank() != 2) return fail(node.name() + ": Uninitialized MatMul weights");
    const int64_t k = w->dim(0), n = w->dim(1);
    const QRange& in = ranges_.at(node.input(0)->name());
    if (in.lo.size() != 1 && static_cast<int64_t>(in.lo.size()) != k) return fail(node.name() + ": Dot product length mismatch");
    std::vector<float> wt(static_cast<size_t>(k * n));  // (n, k): qonnx transposes
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) wt[static_cast<size_t>(j * k + i)] = w->data<float>()[i * n + j];
    ranges_[node.output(0)->name()] = simplified(matvec(wt, n, k, in, false));
    return true;
  }

  bool gemm(const ir::Node& node) {
    if (!node.has_attr("alpha") || !node.has_attr("beta")) return fail(node.name() + ": Gemm without alpha/beta (AttributeError)");
    if (node.attr<int64_t>("transA", 0).value() != 0 || node.attr<int64_t>("transB", 1).value() != 1)
      return fail(node.name() + ": Gemm needs transA = 0, transB = 1");
    auto w = float_weight(node.input(1));
    if (!w || w->rank() != 2) return fail(node.name() + ": Uninitialized Gemm weights");
    const QRange& in = ranges_.at(node.input(0)->name());
    if (in.lo.size() != 1 && static_cast<int64_t>(in.lo.size()) != w->dim(1)) return fail(node.name() + ": length mismatch");
    QRange r = matvec(std::vector<float>(w->data<float>(), w->data<float>() + w->numel()), w->dim(0), w->dim(1), in, false);
    const float alpha = node.attr<float>("alpha").value(), beta = node.attr<float>("beta").value();
    std::optional<Tensor> bias = node.input(2) ? float_weight(node.input(2)) : std::nullopt;
    if (node.input(2) && !node.input(2)->name().empty() && (!bias || bias->rank() > 1)) return fail(node.name() + ": bias");
    for (size_t c = 0; c < r.lo.size(); ++c) {
      // pmin *= alpha; pmin += beta * bias: in pmin's dtype (beta * bias is float32)
      const float b = bias ? beta * bias->data<float>()[bias->numel() == 1 ? 0 : c] : 0.0f;
      for (double* v : {&r.lo[c], &r.hi[c]}) {
        if (r.f32) *v = static_cast<float>(static_cast<float>(*v) * alpha) + b;
        else *v = *v * static_cast<double>(alpha) + static_cast<double>(b);
      }
    }
    ranges_[node.output(0)->name()] = simplified(r);
    return true;
  }

  bool conv(const ir::Node& node) {
    if (node.inputs().size() > 2) return fail(node.name() + ": Found unsupported Conv with bias");
    auto w = float_weight(node.input(1));
    if (!w || w->rank() < 3) return fail(node.name() + ": Uninitialized Conv weights");
    const int64_t ofm = w->dim(0), ifm = w->dim(1), cols = w->numel() / ofm, k_total = cols / ifm;
    const bool depthwise = node.attr<int64_t>("group", 1).value() > 1;
    const QRange& in = ranges_.at(node.input(0)->name());
    QRange rep = in;  // np.repeat(imin, k_total)
    if (in.lo.size() > 1) {
      rep.lo.clear(), rep.hi.clear();
      for (size_t c = 0; c < in.lo.size(); ++c)
        for (int64_t k = 0; k < k_total; ++k) rep.lo.push_back(in.lo[c]), rep.hi.push_back(in.hi[c]);
    }
    QRange r{{}, {}, false};  // .item(): Python floats
    for (int64_t o = 0; o < ofm; ++o) {
      std::vector<float> row(w->data<float>() + o * cols, w->data<float>() + (o + 1) * cols);
      QRange slice = rep;
      if (depthwise && rep.lo.size() > 1) {
        const size_t b = static_cast<size_t>(o * k_total), e = b + static_cast<size_t>(k_total);
        if (e > rep.lo.size()) return fail(node.name() + ": depthwise slice out of range");
        slice.lo.assign(rep.lo.begin() + b, rep.lo.begin() + e), slice.hi.assign(rep.hi.begin() + b, rep.hi.begin() + e);
      }
      if (slice.lo.size() != 1 && slice.lo.size() != row.size()) return fail(node.name() + ": broadcast mismatch");
      QRange one = matvec(row, 1, cols, slice, true);
      r.lo.push_back(one.lo[0]), r.hi.push_back(one.hi[0]);
    }
    ranges_[node.output(0)->name()] = simplified(r);
    return true;
  }
};

Result<ir::Model> with_shapes(ir::Model model) {
  QONNX_ASSIGN_OR_RETURN(auto items, pass::parse_pipeline("infer-shapes"));
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(pass::run_pipeline(model, items, ctx).status());
  return model;
}

// Per tensor, per channel (axis 1; one channel below rank 2): the smallest and largest executed value.
using Observed = std::map<std::string, std::vector<Interval>>;

void observe(const exec::RunResult& run, Observed& seen) {
  for (const auto& [name, t] : run.exposed) {
    if (t.dtype() != DType::kFloat || t.numel() == 0) continue;
    const int64_t channels = t.rank() >= 2 && t.dim(1) > 0 ? t.dim(1) : 1;
    const int64_t inner = channels == 1 ? 1 : t.numel() / t.dim(0) / channels;
    auto& v = seen[name];
    v.resize(static_cast<size_t>(channels), Interval{INFINITY, -INFINITY});
    for (int64_t i = 0; i < t.numel(); ++i) {
      Interval& c = v[static_cast<size_t>(channels == 1 ? 0 : (i / inner) % channels)];
      const double x = t.data<float>()[i];
      c = {std::min(c.lo, x), std::max(c.hi, x)};
    }
  }
}

// Random inputs in [lo, hi], all at one end, each element at a random end, and `extra`.
std::optional<Observed> execute(const ir::Model& model, Interval irange, unsigned seed, int random_runs,
                                const std::vector<std::map<std::string, Tensor>>& extra) {
  auto ex = exec::Executor::create(model);
  if (!ex.is_ok()) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& node : model.graph().nodes())
    for (const ir::Value* o : node->outputs())
      if (o && !o->name().empty()) names.push_back(o->name());
  if (!ex->expose(names).is_ok()) return std::nullopt;
  std::map<std::string, Dims> dims;
  for (const ir::Value* in : model.graph().runtime_inputs()) {
    auto d = model.graph().dims_of(in);
    auto type = model.graph().type_of(in);
    if (!d || !type || type->dtype != DType::kFloat) return std::nullopt;
    for (auto& x : *d) x = x < 0 ? 1 : x;
    dims[in->name()] = *d;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(irange.lo, irange.hi);
  std::bernoulli_distribution coin(0.5);
  Observed seen;
  for (int trial = 0; trial < random_runs + 12; ++trial) {
    std::map<std::string, Tensor> feeds;
    for (const auto& [name, d] : dims) {
      Tensor t(DType::kFloat, d);
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = trial == 0 ? irange.lo : trial == 1 ? irange.hi : trial < 12 ? (coin(rng) ? irange.lo : irange.hi) : u(rng);
        t.data<float>()[i] = static_cast<float>(v);
      }
      feeds[name] = t;
    }
    auto run = ex->run(feeds);
    if (!run.is_ok()) return std::nullopt;
    observe(run.value(), seen);
  }
  for (const auto& feeds : extra) {
    auto run = ex->run(feeds);
    if (!run.is_ok()) return std::nullopt;
    observe(run.value(), seen);
  }
  return seen;
}

// The outcome of one model: counts of tensor channels by how qonnx's bound relates to ours and to
// the executions.
struct Comparison {
  int channels = 0;            // channels both bound
  int equal = 0;               // qonnx's interval == ours
  int qonnx_violated = 0;      // an executed value outside qonnx's interval
  int qonnx_tighter = 0;       // qonnx's interval strictly inside ours (not violated)
  int ours_tighter = 0;        // ours strictly inside qonnx's
  int ours_violated = 0;       // must stay 0
  std::map<std::string, int> tighter_by_reason;  // reason -> count (qonnx tighter, not violated)
  std::map<std::string, int> violated_by_op;     // producing op -> count
  std::vector<std::string> examples;
};

bool inside(Interval x, Interval bound) { return x.lo >= bound.lo && x.hi <= bound.hi; }

// Whether both analyses give `name` the same interval on every channel (ours' hull where it has no
// channels of qonnx's count).
bool same_range(const QRange& q, const analysis::TensorRange& o) {
  const size_t n = std::max(q.lo.size(), o.channels.size());
  for (size_t c = 0; c < n; ++c) {
    const Interval qi = q.channel(q.lo.size() == 1 ? 0 : c);
    const Interval oi = o.channels.size() == n ? o.channels[c] : o.all;
    if (qi.lo != oi.lo || qi.hi != oi.hi) return false;
  }
  return true;
}

// Whether both analyses agree on every dynamic input of the node that makes `v`.
bool same_inputs(const ir::Value* v, const analysis::RangeAnalysis& ours, const QonnxRules& qonnx) {
  const ir::Node* p = v ? v->producer() : nullptr;
  if (!p) return true;
  for (const ir::Value* in : p->inputs()) {
    if (!in || in->name().empty() || !qonnx.is_dynamic(in->name())) continue;
    auto q = qonnx.ranges().find(in->name());
    auto o = ours.tensors.find(in->name());
    if (q == qonnx.ranges().end() || o == ours.tensors.end() || !same_range(q->second, o->second)) return false;
  }
  return true;
}

// Why qonnx's (sound) interval is tighter than ours for a channel of a tensor made by `op`.
std::string tighter_reason(const std::string& op, bool ours_per_tensor, bool inputs_agree, Interval q, Interval o) {
  if (ours_per_tensor) return "per-channel ranges through " + op + " (ours: one range for the tensor)";
  if (!inputs_agree) return "downstream of a wider input (" + op + ")";
  const double scale = std::max({std::fabs(o.lo), std::fabs(o.hi), 1e-30});
  if (op == "MatMul" || op == "Gemm" || op == "Conv") {
    if (std::max(q.lo - o.lo, o.hi - q.hi) <= 1e-5 * scale) return "float32 sum: our rounding slack";
    return "sum: other";
  }
  return "other (" + op + ")";
}

Comparison compare(const ir::Model& model, const analysis::RangeAnalysis& ours, const QonnxRules& qonnx, const Observed& seen) {
  Comparison c;
  for (const auto& [name, q] : qonnx.ranges()) {
    auto it = ours.tensors.find(name);
    if (it == ours.tensors.end()) continue;
    const analysis::TensorRange& o = it->second;
    const ir::Value* v = model.graph().find_value(name);
    const std::string op = v && v->producer() ? v->producer()->op_type() : "input";
    const bool inputs_agree = same_inputs(v, ours, qonnx);
    auto obs = seen.find(name);
    const size_t channels = q.lo.size() == 1 ? (obs != seen.end() ? obs->second.size() : 1) : q.lo.size();
    for (size_t ch = 0; ch < channels; ++ch) {
      const Interval qi = q.channel(q.lo.size() == 1 ? 0 : ch);
      const bool per_tensor = o.channels.size() != channels;
      const Interval oi = per_tensor ? o.all : o.channels[ch];
      ++c.channels;
      if (obs != seen.end() && ch < obs->second.size()) {
        const Interval x = obs->second[ch];
        if (!inside(x, oi)) {
          ++c.ours_violated;
          c.examples.push_back(fmt::format("OURS VIOLATED {}[{}]: [{}, {}] outside [{}, {}]", name, ch, x.lo, x.hi, oi.lo, oi.hi));
        }
        if (!inside(x, qi)) {
          ++c.qonnx_violated;
          ++c.violated_by_op[op];
          if (c.violated_by_op[op] <= 2)
            c.examples.push_back(fmt::format("qonnx violated {} ({})[{}]: executed [{}, {}], qonnx [{}, {}], ours [{}, {}]", name,
                                             op, ch, x.lo, x.hi, qi.lo, qi.hi, oi.lo, oi.hi));
          continue;
        }
      }
      if (qi.lo == oi.lo && qi.hi == oi.hi) {
        ++c.equal;
      } else if (inside(qi, oi)) {
        ++c.qonnx_tighter;
        ++c.tighter_by_reason[tighter_reason(op, per_tensor, inputs_agree, qi, oi)];
      } else if (inside(oi, qi)) {
        ++c.ours_tighter;
      }
    }
  }
  return c;
}

struct Totals {
  Comparison sum;
  int models = 0;
  void add(const Comparison& c) {
    ++models;
    sum.channels += c.channels, sum.equal += c.equal, sum.qonnx_violated += c.qonnx_violated;
    sum.qonnx_tighter += c.qonnx_tighter, sum.ours_tighter += c.ours_tighter, sum.ours_violated += c.ours_violated;
    for (const auto& [k, n] : c.tighter_by_reason) sum.tighter_by_reason[k] += n;
    for (const auto& [k, n] : c.violated_by_op) sum.violated_by_op[k] += n;
  }
  std::string summary() const {
    std::string s = fmt::format("{} models, {} channels: equal {}, qonnx tighter {}, ours tighter {}, qonnx violated {}, ours violated {}\n",
                                models, sum.channels, sum.equal, sum.qonnx_tighter, sum.ours_tighter, sum.qonnx_violated,
                                sum.ours_violated);
    for (const auto& [k, n] : sum.tighter_by_reason) s += fmt::format("  qonnx tighter: {}: {}\n", k, n);
    for (const auto& [k, n] : sum.violated_by_op) s += fmt::format("  qonnx violated after {}: {}\n", k, n);
    return s;
  }
};

struct Run {
  Comparison comparison;
  bool qonnx_ran = false;
  std::string qonnx_failure;
};

std::optional<Run> compare_model(const ir::Model& model, Interval irange, unsigned seed, int random_runs,
                                 const std::vector<std::map<std::string, Tensor>>& extra = {}) {
  analysis::RangeOptions options;
  for (const ir::Value* in : model.graph().runtime_inputs()) options.input_ranges[in->name()] = irange;
  auto ours = analysis::analyze_ranges(model, options);
  EXPECT_TRUE(ours.is_ok()) << ours.status().message();
  if (!ours.is_ok()) return std::nullopt;
  auto seen = execute(model, irange, seed, random_runs, extra);
  if (!seen) return std::nullopt;
  QonnxRules qonnx(model, irange);
  Run r;
  r.qonnx_ran = qonnx.run();
  r.qonnx_failure = qonnx.failure();
  r.comparison = compare(model, ours.value(), qonnx, *seen);  // what qonnx had before a failure, too
  return r;
}

constexpr const char* kQ = dialect::kGeneralDomain;

void add_quant(io::ModelBuilder& b, const std::string& in, const std::string& out, float scale, int bits, bool is_signed) {
  b.initializer(out + "_s", test::f32s(scale)).initializer(out + "_z", test::f32s(0)).initializer(out + "_b", test::f32s(bits));
  b.node("Quant", {in, out + "_s", out + "_z", out + "_b"}, {out}, kQ).attr("signed", is_signed ? 1 : 0).attr("narrow", 0).attr("rounding_mode", "ROUND");
}

// x [2, K] -> Quant -> MatMul (Quant weights, scalar scale) -> Relu -> Quant -> Gemm (transB, alpha,
// beta, bias) -> Relu -> Quant -> Reshape [2, C2, 1, 1] -> Conv 1x1 (Quant weights, no bias) -> Add
// constant [1, C3, 1, 1] -> MaxPool 1x1 -> Flatten. With `exact`, every scale is a power of two and the
// sums are exact float32 (qonnx's rules and ours then compute the same numbers); otherwise the scales
// and the weights are arbitrary floats.
ir::Model generated(std::mt19937& rng, bool exact) {
  std::uniform_int_distribution<int> size(2, 40);
  const int64_t k = size(rng), c1 = size(rng), c2 = size(rng), c3 = size(rng);
  auto scale = [&](float nominal) {
    return exact ? nominal : nominal * std::uniform_real_distribution<float>(0.7f, 1.3f)(rng);
  };
  io::ModelBuilder b;
  b.import(kQ, 1).input("x", DType::kFloat, {2, k}).output("y", DType::kFloat);
  add_quant(b, "x", "xq", scale(0.125f), 4, true);
  auto weight = [&](const std::string& name, Dims dims) {
    b.initializer(name, random_tensor(rng, dims, -1.0f, 1.0f, false));
    add_quant(b, name, name + "q", scale(0.25f), 3, true);
  };
  weight("w1", {k, c1});
  b.node("MatMul", {"xq", "w1q"}, {"h1"});
  b.node("Relu", {"h1"}, {"h1r"});
  add_quant(b, "h1r", "a1", scale(0.5f), 3, false);
  weight("w2", {c2, c1});
  b.initializer("b2", exact ? random_tensor(rng, {c2}, -4.0f, 4.0f, true) : random_tensor(rng, {c2}, -1.0f, 1.0f, false));
  b.node("Gemm", {"a1", "w2q", "b2"}, {"h2"}).attr("transB", 1).attr("alpha", 1.0f).attr("beta", 1.0f);
  b.node("Relu", {"h2"}, {"h2r"});
  add_quant(b, "h2r", "a2", scale(0.25f), 4, false);
  b.initializer("shape", test::i64({4}, {2, c2, 1, 1}));
  b.node("Reshape", {"a2", "shape"}, {"a2r"});
  weight("w3", {c3, c2, 1, 1});
  b.node("Conv", {"a2r", "w3q"}, {"h3"}).attr("kernel_shape", std::vector<int64_t>{1, 1});
  b.initializer("b3", exact ? random_tensor(rng, {1, c3, 1, 1}, -4.0f, 4.0f, true) : random_tensor(rng, {1, c3, 1, 1}, -1.0f, 1.0f, false));
  b.node("Add", {"h3", "b3"}, {"h3b"});
  b.node("MaxPool", {"h3b"}, {"p"}).attr("kernel_shape", std::vector<int64_t>{1, 1});
  b.node("Flatten", {"p"}, {"y"});
  auto model = b.build();
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  auto shaped = with_shapes(std::move(model).value());
  EXPECT_TRUE(shaped.is_ok()) << shaped.status().message();
  return std::move(shaped).value();
}

// The inputs that reach the first layer's bounds: per output channel c of w1 [K, C], row 0 takes each
// x_k at hi where w1[k, c] > 0 (else lo), row 1 the opposite.
std::vector<std::map<std::string, Tensor>> first_layer_witnesses(const ir::Model& model, Interval irange) {
  std::vector<std::map<std::string, Tensor>> out;
  auto w = model.graph().initializer_tensor(model.graph().find_value("w1"));
  if (!w.is_ok()) return out;
  const int64_t k = w->dim(0), c = w->dim(1);
  for (int64_t j = 0; j < c; ++j) {
    Tensor x(DType::kFloat, {2, k});
    for (int64_t i = 0; i < k; ++i) {
      const bool up = w->data<float>()[i * c + j] > 0;
      x.data<float>()[i] = static_cast<float>(up ? irange.hi : irange.lo);
      x.data<float>()[k + i] = static_cast<float>(up ? irange.lo : irange.hi);
    }
    out.push_back({{"x", x}});
  }
  return out;
}

// On exact grids qonnx's float arithmetic makes no rounding error: both analyses give the same
// interval on every channel both bound, and both hold every execution.
TEST(RangeQonnx, ExactGridModelsGiveQonnxsRanges) {
  Totals totals;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    const ir::Model model = generated(rng, true);
    auto run = compare_model(model, {-1.0, 1.0}, seed, 40, first_layer_witnesses(model, {-1.0, 1.0}));
    ASSERT_TRUE(run.has_value());
    ASSERT_TRUE(run->qonnx_ran) << run->qonnx_failure;
    const Comparison& c = run->comparison;
    EXPECT_EQ(c.ours_violated, 0);
    EXPECT_EQ(c.qonnx_violated, 0) << "seed " << seed;
    EXPECT_EQ(c.ours_tighter, 0) << "seed " << seed;
    // Where both see the same inputs they agree; qonnx is tighter only where ours keeps one range for
    // a reshaped tensor (Reshape, Flatten) and qonnx one per element, and downstream of that.
    for (const auto& [reason, n] : c.tighter_by_reason)
      EXPECT_TRUE(reason.find("per-channel ranges through Reshape") == 0 || reason.find("per-channel ranges through Flatten") == 0 ||
                  reason.find("downstream of a wider input") == 0)
          << "seed " << seed << ": " << reason;
    EXPECT_GT(c.equal, 0);
    totals.add(c);
  }
  std::printf("exact grids: %s", totals.summary().c_str());
}

// Arbitrary float scales and weights: ours holds every execution; qonnx's float32 sums may be tighter
// than ours (our rounding slack) or too tight (the executor's sum rounds past them); every tighter
// channel has a reason from the list in docs/range.md, never "other".
TEST(RangeQonnx, FloatModelsDifferOnlyWhereExplained) {
  Totals totals;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(100 + seed);
    const ir::Model model = generated(rng, false);
    auto run = compare_model(model, {-1.0, 1.0}, seed, 40, first_layer_witnesses(model, {-1.0, 1.0}));
    ASSERT_TRUE(run.has_value());
    ASSERT_TRUE(run->qonnx_ran) << run->qonnx_failure;
    const Comparison& c = run->comparison;
    EXPECT_EQ(c.ours_violated, 0) << testing::PrintToString(c.examples);
    for (const auto& [reason, n] : c.tighter_by_reason) EXPECT_EQ(reason.find("other"), std::string::npos) << reason;
    totals.add(c);
  }
  std::printf("float models: %s", totals.summary().c_str());
}

// qonnx ignores a Conv's zero padding: over an input range without 0 the border outputs leave its
// bound. Ours holds them.
TEST(RangeQonnx, QonnxMissesPaddingOverARangeWithoutZero) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    io::ModelBuilder b;
    b.import(kQ, 1).input("x", DType::kFloat, {1, 2, 5, 5}).output("y", DType::kFloat);
    add_quant(b, "x", "xq", 0.25f, 4, false);
    b.initializer("w", random_tensor(rng, {3, 2, 3, 3}, -3.0f, 3.0f, true));
    b.node("Conv", {"xq", "w"}, {"y"}).attr("kernel_shape", std::vector<int64_t>{3, 3}).attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    auto built = b.build();
    ASSERT_TRUE(built.is_ok());
    auto model = with_shapes(std::move(built).value());
    ASSERT_TRUE(model.is_ok());
    auto run = compare_model(model.value(), {1.0, 2.0}, seed, 20);
    ASSERT_TRUE(run.has_value() && run->qonnx_ran) << (run ? run->qonnx_failure : "");
    EXPECT_EQ(run->comparison.ours_violated, 0);
    EXPECT_GT(run->comparison.violated_by_op["Conv"], 0) << "seed " << seed;
  }
}

// qonnx evaluates x * x at (min, min) and (max, max) only (the repeated input takes one prototype):
// over [-1, 1] it claims [1, 1], a stuck channel; the executor gives 0 at x = 0 ... any value in [0, 1].
TEST(RangeQonnx, QonnxSquaresOnlyTheEnds) {
  io::ModelBuilder b;
  b.input("x", DType::kFloat, {1, 3}).output("y", DType::kFloat);
  b.node("Mul", {"x", "x"}, {"y"});
  auto built = b.build();
  ASSERT_TRUE(built.is_ok());
  auto model = with_shapes(std::move(built).value());
  ASSERT_TRUE(model.is_ok());
  QonnxRules qonnx(model.value(), {-1.0, 1.0});
  ASSERT_TRUE(qonnx.run()) << qonnx.failure();
  const QRange& q = qonnx.ranges().at("y");
  EXPECT_EQ(q.lo, std::vector<double>{1.0});
  EXPECT_EQ(q.hi, std::vector<double>{1.0});
  auto run = compare_model(model.value(), {-1.0, 1.0}, 1, 40);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->comparison.ours_violated, 0);
  EXPECT_EQ(run->comparison.violated_by_op["Mul"], 3);  // every channel
}

// Every shared model the executor runs (inputs in [-1, 1], up to 64k input elements): ours holds every
// execution; qonnx's rules where its code would not raise; the counts are printed for docs/range.md.
TEST(RangeQonnx, SharedModels) {
  const auto models = test::shared_models();
  if (models.empty()) GTEST_SKIP() << "no shared models here";
  Totals totals;
  int compared = 0;
  for (const auto& path : models) {
    auto loaded = io::load_model(path.string());
    if (!loaded.is_ok()) continue;
    auto model = with_shapes(std::move(loaded).value());
    if (!model.is_ok()) continue;
    int64_t elements = 0;
    for (const ir::Value* in : model->graph().runtime_inputs())
      if (auto d = model->graph().dims_of(in)) elements += checked_numel(*d);
    if (elements > (1 << 16)) continue;
    auto run = compare_model(model.value(), {-1.0, 1.0}, 1, 6);
    if (!run) continue;
    ++compared;
    const Comparison& c = run->comparison;
    EXPECT_EQ(c.ours_violated, 0) << path << testing::PrintToString(c.examples);
    std::printf("%s: %s%d channels: equal %d, qonnx tighter %d, ours tighter %d, qonnx violated %d\n",
                path.filename().string().c_str(), run->qonnx_ran ? "" : ("qonnx raises (" + run->qonnx_failure + "); before that ").c_str(),
                c.channels, c.equal, c.qonnx_tighter, c.ours_tighter, c.qonnx_violated);
    for (const std::string& e : c.examples) std::printf("  %s\n", e.c_str());
    totals.add(c);
  }
  EXPECT_GE(compared, 5);
  std::printf("shared models: %s", totals.summary().c_str());
}

}  // namespace
}  // namespace qonnx
