// Witnesses of accumulator bounds (qonnx-cc range --witness, issue 25): inputs to the whole model that
// make a linear layer's integer accumulator reach its min or max, built backwards through ops that let
// every layer input element be set on its own, and checked by running the executor.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "qonnx/analysis/range.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/io/tensor_file.h"
#include "qonnx/kernels/transpose.h"

namespace qonnx::analysis {

namespace {

namespace fs = std::filesystem;

bool is_constant(const ir::Value* v) {
  return v && (v->is_initializer() || (v->producer() && v->producer()->op_type() == "Constant"));
}

// Ops whose output element i is a monotone function of element i of one input (the others constant).
bool elementwise_monotone(const ir::Node& n) {
  const dialect::Op q = dialect::classify(n);
  if (q == dialect::Op::kQuant || q == dialect::Op::kBipolarQuant || q == dialect::Op::kMultiThreshold ||
      q == dialect::Op::kTrunc)
    return true;
  static const std::set<std::string> kOnnx = {"Relu", "Clip", "Identity", "Add", "Sub", "Mul", "Div",
                                              "BatchNormalization", "Sigmoid", "Tanh", "Cast"};
  return q == dialect::Op::kNone && n.domain().empty() && kOnnx.count(n.op_type());
}
// Ops that move elements without changing them: flat order kept (Reshape, ...) or permuted (Transpose).
bool moves_data(const ir::Node& n) {
  static const std::set<std::string> kOnnx = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose"};
  return n.domain().empty() && kOnnx.count(n.op_type());
}

// The chain of nodes from one runtime input to `x` along which each element of x is one element of
// that input sent through monotone functions: graph order, and the input. Fails with the reason.
struct Path {
  const ir::Value* source = nullptr;
  std::vector<const ir::Node*> nodes;  // source first
};
Result<Path> trace_back(const ir::Value* x) {
  Path path;
  const ir::Value* v = x;
  while (!(v->is_graph_input() && !v->is_initializer())) {
    const ir::Node* p = v->producer();
    if (!p) return Status(Code::kFailed, fmt::format("'{}' is a constant", v->name()));
    const bool moves = moves_data(*p);
    if (!moves && !elementwise_monotone(*p))
      return Status(Code::kFailed, fmt::format("the layer's input comes through {} ({}), whose output elements cannot "
                                               "be set one by one",
                                               p->name().empty() ? p->output(0)->name() : p->name(), p->op_type()));
    const ir::Value* next = nullptr;
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      const ir::Value* in = p->input(i);
      if (!in || in->name().empty() || is_constant(in)) continue;
      if (moves && i > 0) continue;  // Reshape's shape: shapes, not values
      if (next)
        return Status(Code::kFailed, fmt::format("the layer's input depends on two tensors at {} ({})", p->name(), p->op_type()));
      next = in;
    }
    if (!next) return Status(Code::kFailed, fmt::format("{} ({}) has only constant inputs", p->name(), p->op_type()));
    path.nodes.push_back(p);
    v = next;
  }
  path.source = v;
  std::reverse(path.nodes.begin(), path.nodes.end());
  return path;
}

// One linear layer as the witness needs it: the terms (x element, weight element) of each sum.
struct Layer {
  const ir::Node* node = nullptr;
  const ir::Value* x = nullptr;
  LinearWeight weight;
  std::optional<Tensor> bias;  // float32, one per output channel
  int64_t channels = 0, terms = 0;
};

// The output positions of channel c and their terms, from the executor's own x and y shapes.
class Geometry {
 public:
  static Result<Geometry> of(const Layer& l, const Dims& x_dims, const Dims& y_dims) {
    Geometry g;
    g.layer_ = &l;
    g.x_dims_ = x_dims;
    g.y_dims_ = y_dims;
    const Dims& w = l.weight.codes.dims();
    const std::string& op = l.node->op_type();
    if (op == "Conv") {
      if (x_dims.size() != w.size() || y_dims.size() != w.size() || x_dims.size() < 3)
        return Status(Code::kFailed, "unexpected Conv shapes");
      const size_t spatial = w.size() - 2;
      auto group = l.node->attr<int64_t>("group", 1);
      g.group_ = group.is_ok() ? group.value() : 1;
      g.strides_ = l.node->attr_ints("strides", std::vector<int64_t>(spatial, 1));
      g.dilations_ = l.node->attr_ints("dilations", std::vector<int64_t>(spatial, 1));
      std::vector<int64_t> pads = l.node->attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
      const std::string auto_pad = l.node->attr_string("auto_pad", "NOTSET");
      if (g.strides_.size() != spatial || g.dilations_.size() != spatial || pads.size() != 2 * spatial)
        return Status(Code::kFailed, "unexpected Conv attributes");
      for (size_t d = 0; d < spatial; ++d) {
        const int64_t in = x_dims[d + 2], out = y_dims[d + 2], k = w[d + 2];
        if (auto_pad == "VALID") pads[d] = 0;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
          const int64_t total =
              std::max<int64_t>(0, (out - 1) * g.strides_[d] + (k - 1) * g.dilations_[d] + 1 - in);
          pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        }
      }
      g.pad_begin_.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
      g.positions_ = y_dims[0];
      for (size_t d = 2; d < y_dims.size(); ++d) g.positions_ *= y_dims[d];
    } else {
      // The terms below are MatMul's and Gemm's without transA; other layouts get no witness yet.
      if (op != "MatMul" && op != "Gemm") return Status(Code::kFailed, "no witness is built for " + op + " yet");
      auto trans_a = l.node->attr<int64_t>("transA", 0);
      if (op == "Gemm" && (!trans_a.is_ok() || trans_a.value() != 0))
        return Status(Code::kFailed, "no witness is built for a Gemm with transA yet");
      if (x_dims.empty() || x_dims.back() != l.terms) return Status(Code::kFailed, "unexpected input shape");
      auto trans_b = l.node->attr<int64_t>("transB", 0);
      g.trans_b_ = op == "Gemm" && trans_b.is_ok() && trans_b.value() != 0;
      int64_t n = 1;
      for (int64_t d : x_dims) n *= d;
      g.positions_ = n / l.terms;
    }
    return g;
  }

  int64_t positions() const { return positions_; }

  // Calls f(x element, weight element) for every term of channel c at `position` that reads the input
  // (a padded tap reads 0 and adds nothing), and returns the flat index of the output element.
  int64_t terms(int64_t c, int64_t position, const std::function<void(int64_t, int64_t)>& f) const {
    const Layer& l = *layer_;
    const int64_t C = l.channels, K = l.terms;
    const std::string& op = l.node->op_type();
    if (op != "Conv") {
      for (int64_t k = 0; k < K; ++k) f(position * K + k, trans_b_ ? c * K + k : k * C + c);
      return position * C + c;
    }
    const Dims& w = l.weight.codes.dims();
    const size_t spatial = w.size() - 2;
    int64_t out_area = 1, in_area = 1, kernel_area = 1;
    for (size_t d = 0; d < spatial; ++d) {
      out_area *= y_dims_[d + 2];
      in_area *= x_dims_[d + 2];
      kernel_area *= w[d + 2];
    }
    const int64_t batch = position / out_area, at = position % out_area;
    std::vector<int64_t> o(spatial);
    for (int64_t rest = at, d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
      o[static_cast<size_t>(d)] = rest % y_dims_[static_cast<size_t>(d) + 2];
      rest /= y_dims_[static_cast<size_t>(d) + 2];
    }
    const int64_t cin_g = w[1], c_per_group = C / group_, cin = x_dims_[1];
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      const int64_t in_channel = (c / c_per_group) * cin_g + ci;
      for (int64_t kk = 0; kk < kernel_area; ++kk) {
        int64_t rest = kk, flat = 0, stride = 1;
        bool inside = true;
        for (int64_t d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
          const size_t ds = static_cast<size_t>(d);
          const int64_t j = rest % w[ds + 2];
          rest /= w[ds + 2];
          const int64_t coord = o[ds] * strides_[ds] - pad_begin_[ds] + j * dilations_[ds];
          inside = inside && coord >= 0 && coord < x_dims_[ds + 2];
          flat += coord * stride;
          stride *= x_dims_[ds + 2];
        }
        if (inside) f((batch * cin + in_channel) * in_area + flat, (c * cin_g + ci) * kernel_area + kk);
      }
    }
    return (batch * C + c) * out_area + at;
  }

 private:
  const Layer* layer_ = nullptr;
  Dims x_dims_, y_dims_;
  int64_t group_ = 1, positions_ = 0;
  bool trans_b_ = false;
  std::vector<int64_t> strides_, dilations_, pad_begin_;
};

// The integers of an executor tensor on the grid float32(n * scale); fails off the grid.
Result<std::vector<int64_t>> integers_of(const Tensor& x, double scale) {
  auto f = exec::cast_tensor(x, DType::kFloat);
  if (!f.is_ok()) return f.status();
  std::vector<int64_t> n(static_cast<size_t>(f->numel()));
  const float* p = f->data<float>();
  for (int64_t i = 0; i < f->numel(); ++i) {
    const double r = std::round(static_cast<double>(p[i]) / scale);
    if (!(std::fabs(r) < 9.0e15) || static_cast<float>(r * scale) != p[i])
      return Status(Code::kFailed, fmt::format("the layer's input element {} = {} is not on its integer grid", i, p[i]));
    n[static_cast<size_t>(i)] = static_cast<int64_t>(r);
  }
  return n;
}

// The end of a graph input's range used for a witness: finite (float32 max when unbounded).
double finite_end(double v) { return std::clamp(v, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX)); }

std::string safe_name(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' ? ch : '_';
  while (!out.empty() && out.front() == '.') out.erase(out.begin());
  return out.empty() ? "layer" : out;
}

class WitnessBuilder {
 public:
  WitnessBuilder(const ir::Model& model, RangeAnalysis& analysis) : model_(model), g_(model.graph()), a_(analysis) {}

  Result<std::vector<Witness>> run(const std::string& dir) {
    std::vector<Witness> out;
    std::vector<std::optional<Layer>> layers;
    std::vector<Result<Path>> paths;
    std::vector<std::string> expose;
    for (Accumulator& acc : a_.accumulators) {
      layers.push_back(layer_of(acc));
      paths.push_back(layers.back() ? trace_back(layers.back()->x) : Result<Path>(Status(Code::kFailed, "")));
      if (!layers.back()) continue;
      expose.push_back(acc.output);
      if (paths.back().is_ok())
        for (const ir::Node* n : paths.back()->nodes) expose.push_back(n->output(0)->name());
    }
    std::sort(expose.begin(), expose.end());
    expose.erase(std::unique(expose.begin(), expose.end()), expose.end());
    // The model run with every input at its low end, and at its high end: per layer input element,
    // the integers the two ends give (the element's extremes, its path being monotone).
    auto ex = exec::Executor::create(model_);
    Status ready = ex.is_ok() ? ex->expose(expose) : ex.status();
    auto low = ready.is_ok() ? feeds(false) : Result<std::map<std::string, Tensor>>(ready);
    auto high = low.is_ok() ? feeds(true) : low;
    auto run_low = high.is_ok() ? ex->run(low.value()) : Result<exec::RunResult>(high.status());
    auto run_high = run_low.is_ok() ? ex->run(high.value()) : run_low;
    std::set<std::string> used_names;
    for (size_t i = 0; i < a_.accumulators.size(); ++i) {
      Accumulator& acc = a_.accumulators[i];
      std::string layer_dir;
      if (!dir.empty()) {
        std::string base = safe_name(acc.node.empty() ? acc.output : acc.node), name = base;
        for (int k = 2; used_names.count(name); ++k) name = fmt::format("{}_{}", base, k);
        used_names.insert(name);
        layer_dir = (fs::path(dir) / name).string();
      }
      std::string why_min, why_max;
      for (bool max : {false, true}) {
        Witness w;
        w.accumulator = i;
        w.max = max;
        w.bound = max ? acc.max : acc.min;
        if (!layers[i])
          w.why = "the layer's weight or bias is not a constant the witness can read";
        else if (!paths[i].is_ok())
          w.why = paths[i].status().message();
        else if (!run_high.is_ok())
          w.why = "the model does not run on its inputs' range ends: " + run_high.status().message();
        else
          build(*layers[i], *paths[i], {&low.value(), &run_low.value()}, {&high.value(), &run_high.value()}, ex.value(), w);
        if (w.attained && !layer_dir.empty()) {
          w.dir = layer_dir + (max ? "_max" : "_min");
          QONNX_RETURN_IF_ERROR(write(w, acc));
        }
        (max ? why_max : why_min) = w.attained ? "" : w.why;
        out.push_back(std::move(w));
      }
      acc.attained = why_min.empty() && why_max.empty();
      acc.not_attained = acc.attained ? ""
                         : why_min == why_max ? why_min
                         : why_min.empty()    ? "max: " + why_max
                         : why_max.empty()    ? "min: " + why_min
                                              : "min: " + why_min + "; max: " + why_max;
    }
    return out;
  }

 private:
  const ir::Model& model_;
  const ir::Graph& g_;
  RangeAnalysis& a_;

  std::optional<Layer> layer_of(const Accumulator& acc) const {
    const ir::Value* y = g_.find_value(acc.output);
    const ir::Node* node = y ? y->producer() : nullptr;
    if (!node) return std::nullopt;
    auto weight = linear_weight(model_, *node);
    if (!weight) return std::nullopt;
    Layer l;
    l.node = node;
    l.x = node->input(0);
    l.weight = std::move(*weight);
    l.channels = static_cast<int64_t>(acc.lo.size());
    l.terms = acc.reduction;
    if (node->op_type() != "MatMul" && node->inputs().size() > 2 && node->input(2) && !node->input(2)->name().empty()) {
      auto stored = node->input(2)->is_initializer() ? g_.initializer_tensor(node->input(2)) : Result<Tensor>(Status(Code::kFailed, ""));
      auto b = stored.is_ok() ? exec::cast_tensor(stored.value(), DType::kFloat) : Result<Tensor>(stored.status());
      if (!b.is_ok() || (b->numel() != 1 && b->numel() != l.channels)) return std::nullopt;
      l.bias = std::move(b).value();
    }
    return l;
  }

  // Every runtime input filled with one end of its range (its declared dims, unknown dims as 1).
  Result<std::map<std::string, Tensor>> feeds(bool high) const {
    std::map<std::string, Tensor> out;
    for (const ir::Value* in : g_.runtime_inputs()) {
      auto dims = g_.dims_of(in);
      auto type = g_.type_of(in);
      if (!dims || !type) return Status(Code::kFailed, fmt::format("the shape or type of input '{}' is unknown", in->name()));
      for (int64_t& d : *dims) d = std::max<int64_t>(d, 1);
      Tensor t(DType::kDouble, *dims);
      const Interval r = a_.tensors.at(in->name()).all;
      std::fill(t.data<double>(), t.data<double>() + t.numel(), finite_end(high ? r.hi : r.lo));
      QONNX_ASSIGN_OR_RETURN(Tensor cast, exec::cast_tensor(t, type->dtype));
      out.emplace(in->name(), std::move(cast));
    }
    return out;
  }

  static const Tensor* value_in(const exec::RunResult& r, const std::map<std::string, Tensor>& feeds, const ir::Value* v) {
    if (auto it = r.exposed.find(v->name()); it != r.exposed.end()) return &it->second;
    if (auto it = feeds.find(v->name()); it != feeds.end()) return &it->second;
    return nullptr;
  }

  // For each element of x, the element of the path's source it is computed from.
  static Result<std::vector<int64_t>> source_index(const Path& path, const exec::RunResult& r,
                                                   const std::map<std::string, Tensor>& feeds) {
    const Tensor* src = value_in(r, feeds, path.source);
    if (!src) return Status(Code::kFailed, "the source input was not fed");
    Tensor index(DType::kDouble, src->dims());
    for (int64_t i = 0; i < index.numel(); ++i) index.data<double>()[i] = static_cast<double>(i);
    for (const ir::Node* n : path.nodes) {
      const Tensor* out = value_in(r, feeds, n->output(0));
      if (!out) return Status(Code::kFailed, "a path tensor was not exposed");
      if (out->numel() != index.numel())
        return Status(Code::kFailed, fmt::format("{} ({}) broadcasts: one input element feeds several of the layer's",
                                                 n->name(), n->op_type()));
      if (n->op_type() == "Transpose" && n->domain().empty()) {
        std::vector<int64_t> perm = n->attr_ints("perm");
        if (perm.empty())
          for (int64_t d = static_cast<int64_t>(index.rank()) - 1; d >= 0; --d) perm.push_back(d);
        index = kernels::transposed(index, perm);
      }
      index = index.reshaped(out->dims());
    }
    std::vector<int64_t> map(static_cast<size_t>(index.numel()));
    for (int64_t i = 0; i < index.numel(); ++i) map[static_cast<size_t>(i)] = static_cast<int64_t>(index.data<double>()[i]);
    return map;
  }

  // The inputs of a run and what it computed.
  struct Run {
    const std::map<std::string, Tensor>* feeds;
    const exec::RunResult* result;
  };

  void build(const Layer& l, const Path& path, Run low, Run high, const exec::Executor& ex, Witness& w) const {
    auto fail = [&w](std::string why) { w.why = std::move(why); };
    const TensorRange& xr = a_.tensors.at(l.x->name());
    if (!xr.scaled_int) return fail("the layer's input has no integer form");
    const double scale = xr.scaled_int->scale[0];
    const Tensor* x_low = value_in(*low.result, *low.feeds, l.x);
    const Tensor* y_low = value_in(*low.result, *low.feeds, l.node->output(0));
    const Tensor* x_high = value_in(*high.result, *high.feeds, l.x);
    if (!x_low || !y_low || !x_high) return fail("the layer's input or output was not exposed");
    auto n_low = integers_of(*x_low, scale);
    auto n_high = integers_of(*x_high, scale);
    if (!n_low.is_ok() || !n_high.is_ok()) return fail((n_low.is_ok() ? n_high : n_low).status().message());
    auto map = source_index(path, *low.result, *low.feeds);
    if (!map.is_ok()) return fail(map.status().message());
    auto geometry = Geometry::of(l, x_low->dims(), y_low->dims());
    if (!geometry.is_ok()) return fail(geometry.status().message());
    // The best sum the two ends of every element allow, over the channels that reach the bound in the
    // analysis and every output position.
    const float* codes = l.weight.codes.data<float>();
    const Accumulator& acc = a_.accumulators[w.accumulator];
    const std::vector<int64_t>& per_channel = w.max ? acc.hi : acc.lo;
    const int sign = w.max ? 1 : -1;
    __int128 best = 0;
    bool found = false;
    int64_t best_c = -1, best_pos = -1;
    for (int64_t c = 0; c < l.channels; ++c) {
      if (per_channel[static_cast<size_t>(c)] != w.bound) continue;
      for (int64_t pos = 0; pos < geometry->positions(); ++pos) {
        __int128 sum = 0;
        geometry->terms(c, pos, [&](int64_t xi, int64_t wi) {
          const int64_t a = (*n_low)[static_cast<size_t>(xi)], b = (*n_high)[static_cast<size_t>(xi)];
          const __int128 wa = static_cast<__int128>(codes[wi]) * a, wb = static_cast<__int128>(codes[wi]) * b;
          sum += sign > 0 ? std::max(wa, wb) : std::min(wa, wb);
        });
        if (!found || sign * sum > sign * best) {
          best = sum;
          best_c = c;
          best_pos = pos;
          found = true;
        }
        if (best == w.bound) break;
      }
      if (found && best == w.bound) break;
    }
    if (!found) return fail("no output channel reaches the bound");
    if (best != w.bound)
      return fail(fmt::format("the best input with every element at an end of its range reaches {}; the bound also "
                              "counts values the inputs cannot give together (padding, or a range wider than reached)",
                              static_cast<int64_t>(best)));
    // The witness: the source at its low end except the elements of the chosen sum's terms.
    std::map<std::string, Tensor> witness = *low.feeds;
    const Interval src_range = a_.tensors.at(path.source->name()).all;
    auto src = exec::cast_tensor(witness.at(path.source->name()), DType::kDouble);
    if (!src.is_ok()) return fail(src.status().message());
    geometry->terms(best_c, best_pos, [&](int64_t xi, int64_t wi) {
      const int64_t a = (*n_low)[static_cast<size_t>(xi)], b = (*n_high)[static_cast<size_t>(xi)];
      const bool want_high_n = (codes[wi] > 0) == w.max;
      const bool take_high_end = want_high_n ? b > a : b < a;
      src->data<double>()[(*map)[static_cast<size_t>(xi)]] = finite_end(take_high_end ? src_range.hi : src_range.lo);
    });
    auto typed = exec::cast_tensor(src.value(), witness.at(path.source->name()).dtype());
    if (!typed.is_ok()) return fail(typed.status().message());
    witness[path.source->name()] = std::move(typed).value();
    check(l, *geometry, best_c, best_pos, witness, ex, w);
  }

  // Runs the executor on the witness: the integer sum of its own layer input must equal the bound, and
  // the layer's output element must equal that sum's real value within float32 summation error.
  void check(const Layer& l, const Geometry& geometry, int64_t c, int64_t pos, std::map<std::string, Tensor> witness,
             const exec::Executor& ex, Witness& w) const {
    auto run = ex.run(witness);
    if (!run.is_ok()) {
      w.why = "the executor failed on the witness: " + run.status().message();
      return;
    }
    const Tensor* x = value_in(run.value(), witness, l.x);
    const Tensor* y = value_in(run.value(), witness, l.node->output(0));
    auto xf = x ? exec::cast_tensor(*x, DType::kFloat) : Result<Tensor>(Status(Code::kFailed, "not exposed"));
    auto n = x ? integers_of(*x, a_.tensors.at(l.x->name()).scaled_int->scale[0]) : Result<std::vector<int64_t>>(xf.status());
    if (!y || !n.is_ok() || !xf.is_ok()) {
      w.why = "the witness run: " + (n.is_ok() ? xf.status().message() : n.status().message());
      return;
    }
    const float* codes = l.weight.codes.data<float>();
    const float* values = l.weight.value.data<float>();
    __int128 sum = 0;
    double real = 0, abs_sum = 0;
    const int64_t at = geometry.terms(c, pos, [&](int64_t xi, int64_t wi) {
      sum += static_cast<__int128>(codes[wi]) * (*n)[static_cast<size_t>(xi)];
      const double term = static_cast<double>(values[wi]) * xf->data<float>()[xi];
      real += term;
      abs_sum += std::fabs(term);
    });
    if (l.bias) {
      const double b = l.bias->data<float>()[l.bias->numel() == 1 ? 0 : c];
      real += b;
      abs_sum += std::fabs(b);
    }
    w.channel = c;
    w.index.clear();
    for (int64_t rest = at, d = static_cast<int64_t>(y->rank()) - 1; d >= 0; --d) {
      w.index.insert(w.index.begin(), rest % y->dim(static_cast<size_t>(d)));
      rest /= y->dim(static_cast<size_t>(d));
    }
    w.value = exec::element_as_double(*y, at);
    if (sum != w.bound) {
      w.why = fmt::format("the executor's accumulator on the witness is {}, not {}", static_cast<int64_t>(sum), w.bound);
      return;
    }
    if (!(std::fabs(w.value - real) <= float_sum_slack(l.terms + 2, abs_sum))) {
      w.why = fmt::format("the executor's output {} is not the witness's sum {}", w.value, real);
      return;
    }
    w.inputs.clear();
    for (const ir::Value* in : g_.runtime_inputs()) w.inputs.push_back(witness.at(in->name()));
    w.attained = true;
  }

  Status write(const Witness& w, const Accumulator& acc) const {
    std::error_code ec;
    fs::create_directories(w.dir, ec);
    if (ec) return Status(Code::kCannotWrite, fmt::format("--witness: cannot create {}: {}", w.dir, ec.message()));
    const auto inputs = g_.runtime_inputs();
    for (size_t k = 0; k < inputs.size(); ++k)
      QONNX_RETURN_IF_ERROR(io::write_tensor_pb(fs::path(w.dir) / fmt::format("input_{}.pb", k), inputs[k]->name(), w.inputs[k]));
    std::ofstream info(fs::path(w.dir) / "witness.txt");
    info << fmt::format("layer {} ({}), output '{}'\n", acc.node, acc.op_type, acc.output)
         << fmt::format("accumulator {} = {} at channel {}, element [{}]\n", w.max ? "max" : "min", w.bound, w.channel,
                        fmt::join(w.index, ", "))
         << fmt::format("executor value there: {}\n", w.value)
         << fmt::format("check: qonnx-cc exec MODEL --input-dir {} --expose {}\n", w.dir, acc.output);
    if (!info) return Status(Code::kCannotWrite, "--witness: cannot write " + (fs::path(w.dir) / "witness.txt").string());
    return Status::ok();
  }
};

}  // namespace

Result<std::vector<Witness>> check_witnesses(const ir::Model& model, RangeAnalysis& analysis, const std::string& dir) {
  return WitnessBuilder(model, analysis).run(dir);
}

}  // namespace qonnx::analysis
