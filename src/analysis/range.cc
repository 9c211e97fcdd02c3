#include "qonnx/analysis/range.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/kernels/quant.h"
#include "qonnx/kernels/transpose.h"
#include "qonnx/quant/params.h"

namespace qonnx::analysis {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }
Interval hull_of(const std::vector<Interval>& v) {
  Interval h{kInf, -kInf};
  for (const Interval& i : v) h = hull(h, i);
  return h;
}
Interval everything() { return {-kInf, kInf}; }

// double -> float32 rounded toward -inf / +inf, so a bound computed in double stays a bound in float32.
double float_down(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x) f = std::nextafter(f, -INFINITY);
  return f;
}
double float_up(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, INFINITY);
  return f;
}

// The whole range of a tensor type (floats: everything but NaN).
Interval type_range(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return {-128, 127};
    case DType::kUInt8: return {0, 255};
    case DType::kInt16: return {-32768, 32767};
    case DType::kUInt16: return {0, 65535};
    case DType::kInt32: return {-2147483648.0, 2147483647.0};
    case DType::kUInt32: return {0, 4294967295.0};
    case DType::kInt64: return {-9223372036854775808.0, 9223372036854775807.0};
    case DType::kUInt64: return {0, 18446744073709551615.0};
    case DType::kInt4: return {-8, 7};
    case DType::kUInt4: return {0, 15};
    case DType::kBool: return {0, 1};
    default: return everything();
  }
}

// The values of `t` (rank <= rank) broadcast against a tensor of rank `rank`, as one value per index
// of `axis` (count of them): a scalar repeated, or a tensor whose only non-1 dim lands on `axis`.
std::optional<std::vector<float>> per_axis(const Tensor& t, int64_t rank, int64_t axis, int64_t count) {
  if (t.numel() == 1) return std::vector<float>(static_cast<size_t>(count), t.data<float>()[0]);
  if (static_cast<int64_t>(t.rank()) > rank || axis < 0 || count <= 0) return std::nullopt;
  const int64_t offset = rank - static_cast<int64_t>(t.rank());
  for (size_t d = 0; d < t.rank(); ++d) {
    const int64_t out_axis = offset + static_cast<int64_t>(d);
    if (out_axis == axis ? t.dim(d) != count : t.dim(d) != 1) return std::nullopt;
  }
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// The axis (of a rank-`rank` tensor they broadcast against) along which a and b vary: the first non-1
// dim of the one with more than one element; 0 when both are scalars.
int64_t varying_axis(const Tensor& a, const Tensor& b, int64_t rank) {
  for (const Tensor* t : {&a, &b}) {
    if (t->numel() <= 1) continue;
    const int64_t offset = rank - static_cast<int64_t>(t->rank());
    for (size_t d = 0; d < t->rank(); ++d)
      if (t->dim(d) != 1) return offset + static_cast<int64_t>(d);
  }
  return 0;
}

Interval tensor_hull(const Tensor& t) {
  Interval h{kInf, -kInf};
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) h = hull(h, {p[i], p[i]});
  return h;
}

// The exponent of the lowest set bit of a finite non-zero float32: v is an integer multiple of 2^e.
int lowest_bit_exponent(float v) {
  int e = 0;
  int64_t m = static_cast<int64_t>(std::ldexp(std::frexp(static_cast<double>(v), &e), 24));  // v = m 2^(e-24)
  e -= 24;
  while (m % 2 == 0) {
    m /= 2;
    ++e;
  }
  return e;
}

// log2 of a positive power of two, nullopt for anything else.
std::optional<int> power_of_two_exponent(double v) {
  int e = 0;
  if (!(v > 0) || std::frexp(v, &e) != 0.5) return std::nullopt;
  return e - 1;
}

int64_t clamp_to_int64(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// One scale for every channel (the integers of different channels then add up in one accumulator).
bool uniform_scale(const ScaledInt& s) {
  return !s.scale.empty() && std::all_of(s.scale.begin(), s.scale.end(), [&](double v) { return v == s.scale[0]; });
}

// Float32 steps added on each side of Exp's and Log's values (the C library's expf / logf) at the ends
// of a range. glibc's are monotone: a scan of every float32 input found no value below the running
// maximum of those before it. Other C libraries promise less than 1 ulp of error (faithful rounding);
// then for x < y, f(x) <= exact(x) + 1 ulp <= exact(y) + 1 ulp <= f(y) + 2 ulps: 2 steps cover them.
constexpr int kLibmMonotoneMargin = 2;

// Outer bounds of MLAS's Sigmoid, Tanh and Erf approximations (ort_arithmetic.h), whose monotonicity
// is not established: their largest values over every float32 in [1, 18], [1, 9] and [0.5, 3.925]
// (beyond, each clamps its input; below, each is under 0.8), measured by a scan; Tanh and Erf are
// exactly odd (v * p(v^2) / q(v^2), and erf's sign bit), Sigmoid is clamped below at 0.
constexpr float kSigmoidMax = 0x1.000002p+0f;  // at x = 0x1.17b68ap+4
constexpr float kTanhMax = 0x1.000004p+0f;     // at x = 0x1.0f37ap+3
constexpr float kErfMax = 1.0f;

// Tanh is monotone up to this many float32 steps: a scan of every float32 in [-9, 9] ascending (beyond,
// the kernel clamps its input to +-9) through ort::mlas_tanh compiled with the build's flags (-O3
// -ffp-contract=off) found no value more than 8 steps below the largest value before it (the worst at
// x = -0x1.c3b83ap+2). So for x <= y, tanh(x) <= tanh(y) + 8 steps, and the kernel at the range's ends
// widened by 8 steps holds every value in between. The same scan of ort::mlas_erf over [-3.925,
// 3.925] (beyond, clamped) found no drop at all: Erf is monotone, margin 0. (Sigmoid: not scanned yet,
// outer bounds.)
constexpr int kTanhMonotoneMargin = 8;
constexpr int kErfMonotoneMargin = 0;

bool is_integral(double v) { return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15; }

class Analyzer {
 public:
  Analyzer(const ir::Model& model, const RangeOptions& options) : model_(model), g_(model.graph()), options_(options) {}

  // The weight of a linear layer with integer codes, as linear() reads it.
  std::optional<LinearWeight> linear_weight(const ir::Node& node) const {
    auto trans_attr = node.attr<int64_t>("transB", 0);
    const bool trans_b = node.op_type() == "Gemm" && trans_attr.is_ok() && trans_attr.value() != 0;
    auto cw = const_weight(node.input(1), node.op_type() == "Conv" || trans_b ? 0 : 1);
    if (!cw || !cw->codes) return std::nullopt;
    return LinearWeight{std::move(cw->value), std::move(*cw->codes)};
  }

  Result<RangeAnalysis> run() {
    for (const ir::Value* in : g_.runtime_inputs()) set_input(in);
    QONNX_ASSIGN_OR_RETURN(auto order, exec::topological_order(g_));
    for (const ir::Node* node : order) visit(*node);
    return std::move(out_);
  }

 private:
  const ir::Model& model_;
  const ir::Graph& g_;
  const RangeOptions& options_;
  RangeAnalysis out_;
  std::map<const ir::Value*, DType> dtype_;

  DType dtype_of(const ir::Value* v) const {
    if (auto it = dtype_.find(v); it != dtype_.end()) return it->second;
    if (const ir::Initializer* init = g_.initializer(v)) return init->dtype();
    if (auto t = g_.type_of(v); t) return t->dtype;
    return DType::kUndefined;
  }
  // The declared rank, else that of input 0 for ops that keep it (so models without inferred shapes
  // keep their per-channel ranges through quantizers and activations); -1 when unknown.
  int64_t rank_of(const ir::Value* v) const {
    const int64_t declared = g_.rank_of(v);
    const ir::Node* p = v ? v->producer() : nullptr;
    if (declared >= 0 || !p || p->inputs().empty()) return declared;
    const dialect::Op qop = dialect::classify(*p);
    const bool keeps_rank = qop == dialect::Op::kQuant || qop == dialect::Op::kBipolarQuant ||
                            qop == dialect::Op::kMultiThreshold ||
                            (p->domain().empty() && (p->op_type() == "Relu" || p->op_type() == "Clip" ||
                                                     p->op_type() == "Identity" || p->op_type() == "MaxPool"));
    return keeps_rank ? rank_of(p->input(0)) : -1;
  }
  // Dim 1 when known and positive, else 0.
  int64_t channel_dim(const ir::Value* v) const {
    auto d = g_.dims_of(v);
    return d && d->size() >= 2 && (*d)[1] > 0 ? (*d)[1] : 0;
  }

  void set(const ir::Value* v, TensorRange r, DType dtype) {
    if (!v) return;
    if (!r.channels.empty()) r.all = hull_of(r.channels);
    dtype_[v] = dtype;
    if (!out_.tensors.count(v->name())) out_.order.push_back(v->name());
    out_.tensors[v->name()] = std::move(r);
  }

  // A constant input as float32 (initializers only), nullopt otherwise.
  std::optional<Tensor> constant(const ir::Value* v) const {
    if (!v || !v->is_initializer()) return std::nullopt;
    auto t = g_.initializer_tensor(v);
    if (!t.is_ok()) return std::nullopt;
    auto f = exec::cast_tensor(t.value(), DType::kFloat);
    if (!f.is_ok()) return std::nullopt;
    return std::move(f).value();
  }

  // A constant weight: an initializer, or a Quant / BipolarQuant of constants whose scale and zero point are scalars
  // or one per output channel (`out_axis` of the weight). `codes` holds its integers (code - zero
  // point), when every zero point is integral, or an integral initializer itself.
  // `out_axis` < 0: any axis the parameters vary along (reported in `scale_axis`, -1 for scalars).
  struct ConstWeight {
    Tensor value;
    std::optional<Tensor> codes;
    int64_t scale_axis = -1;
  };
  std::optional<ConstWeight> const_weight(const ir::Value* v, int64_t out_axis) const {
    if (auto c = constant(v)) {
      ConstWeight w{*c, std::nullopt, -1};
      const float* p = c->data<float>();
      if (std::all_of(p, p + c->numel(), [](float x) { return is_integral(x); })) w.codes = *c;
      return w;
    }
    const ir::Node* q = v ? v->producer() : nullptr;
    if (q && q->op_type() == "Transpose" && q->domain().empty()) {
      // Brevitas exports Quant(W [C, K]) -> Transpose -> MatMul: the codes move with the values.
      std::vector<int64_t> perm = q->attr_ints("perm");
      auto inner = const_weight(q->input(0), -1);
      if (!inner) return std::nullopt;
      const int64_t rank = static_cast<int64_t>(inner->value.rank());
      if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t d = 0; d < static_cast<int64_t>(sorted.size()); ++d)
        if (sorted[static_cast<size_t>(d)] != d) return std::nullopt;
      if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
      if (out_axis >= 0 && out_axis < rank && inner->scale_axis >= 0 && perm[out_axis] != inner->scale_axis)
        return std::nullopt;
      ConstWeight w{kernels::transposed(inner->value, perm), std::nullopt, -1};
      if (inner->codes) w.codes = kernels::transposed(*inner->codes, perm);
      return w;
    }
    const dialect::Op qop = q ? dialect::classify(*q) : dialect::Op::kNone;
    if (qop != dialect::Op::kQuant && qop != dialect::Op::kBipolarQuant) return std::nullopt;
    std::vector<std::optional<Tensor>> holder;
    auto tensors = input_tensors(*q, holder);
    if (tensors.empty() || !tensors[0]) return std::nullopt;
    quant::NodeInputs in(*q, tensors);
    const bool bipolar = qop == dialect::Op::kBipolarQuant;
    auto params = bipolar ? quant::read_bipolar_params(in) : quant::read_quant_params(in);
    if (!params.is_ok()) return std::nullopt;
    auto codes = bipolar ? quant::bipolar_codes(in, *tensors[0], params->scale)
                         : kernels::quant_codes(in, *tensors[0], params.value());
    if (!codes.is_ok() || codes->dims() != tensors[0]->dims() || codes->rank() < 2) return std::nullopt;
    const Tensor& x = *tensors[0];
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (out_axis < 0) out_axis = varying_axis(params->scale, params->zeropt, rank);
    if (out_axis >= rank) return std::nullopt;
    const int64_t count = x.dim(static_cast<size_t>(out_axis));
    auto s = per_axis(params->scale, rank, out_axis, count);
    auto z = per_axis(params->zeropt, rank, out_axis, count);
    if (!s || !z) return std::nullopt;
    int64_t inner = 1;
    for (int64_t d = out_axis + 1; d < rank; ++d) inner *= x.dim(static_cast<size_t>(d));
    ConstWeight w{Tensor(DType::kFloat, x.dims()), Tensor(DType::kFloat, x.dims()),
                  params->scale.numel() > 1 || params->zeropt.numel() > 1 ? out_axis : -1};
    const float* cp = codes->data<float>();
    float* vp = w.value.data<float>();
    float* np = w.codes->data<float>();
    bool integral = true;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const size_t c = static_cast<size_t>((i / inner) % count);
      vp[i] = (cp[i] - (*z)[c]) * (*s)[c];  // the kernel's float32 formula
      np[i] = cp[i] - (*z)[c];
      integral = integral && is_integral((*z)[c]);
    }
    if (!integral) w.codes.reset();
    return w;
  }

  // The range of an input value (constants: their values, per channel along axis 1, read in double;
  // 64-bit integers, which double may round, widened by one step of double on each side).
  TensorRange range_of(const ir::Value* v) {
    if (auto it = out_.tensors.find(v->name()); it != out_.tensors.end()) return it->second;
    TensorRange r;
    auto stored = v && v->is_initializer() ? g_.initializer_tensor(v) : Result<Tensor>(Status(Code::kFailed, ""));
    auto c = stored.is_ok() ? exec::cast_tensor(stored.value(), DType::kDouble) : Result<Tensor>(stored.status());
    if (c.is_ok()) {
      const bool wide = stored->dtype() == DType::kInt64 || stored->dtype() == DType::kUInt64;
      auto widen = [wide](Interval i) {
        return wide ? Interval{std::nextafter(i.lo, -kInf), std::nextafter(i.hi, kInf)} : i;
      };
      const double* p = c->data<double>();
      r.all = c->numel() ? Interval{kInf, -kInf} : Interval{0, 0};
      for (int64_t i = 0; i < c->numel(); ++i) r.all = hull(r.all, {p[i], p[i]});
      r.all = widen(r.all);
      if (c->rank() >= 2 && c->dim(1) > 0 && c->numel() > 0) {
        const int64_t channels = c->dim(1), inner = c->numel() / c->dim(0) / channels;
        r.channels.assign(static_cast<size_t>(channels), Interval{kInf, -kInf});
        for (int64_t i = 0; i < c->numel(); ++i) {
          Interval& ch = r.channels[static_cast<size_t>((i / inner) % channels)];
          ch = hull(ch, {p[i], p[i]});
        }
        for (Interval& ch : r.channels) ch = widen(ch);
      }
    } else {
      r.all = type_range(dtype_of(v));
      r.note = "not reached by the analysis";
    }
    return r;
  }

  void set_input(const ir::Value* in) {
    TensorRange r;
    const DType dtype = dtype_of(in);
    if (auto it = options_.input_ranges.find(in->name()); it != options_.input_ranges.end()) {
      r.all = {float_down(it->second.lo), float_up(it->second.hi)};
    } else if (auto dt = ir::integer_datatype_range(g_.finn_datatype(in->name())); dt) {
      r.all = {dt->min, dt->max};
      // INT64 / UINT64 ends do not convert to int64 exactly: no integer form for them.
      constexpr double kLimit = 4611686018427387904.0;  // 2^62
      if (dt->min >= -kLimit && dt->max <= kLimit)
        r.scaled_int = ScaledInt{{1.0}, {0.0}, {static_cast<int64_t>(dt->min)}, {static_cast<int64_t>(dt->max)}};
    } else {
      r.all = type_range(dtype);
    }
    set(in, std::move(r), dtype);
  }

  void fallback(const ir::Node& node, const std::string& why) {
    for (const ir::Value* o : node.outputs()) {
      if (!o || o->name().empty()) continue;
      TensorRange r;
      r.all = type_range(dtype_of(o));
      r.note = fmt::format("{} ({}): {}; the type's whole range", node.name(), node.op_type(), why);
      set(o, std::move(r), dtype_of(o));
    }
  }

  void visit(const ir::Node& node) {
    const std::string& op = node.op_type();
    const dialect::Op qop = dialect::classify(node);
    std::string why = "op not handled by the range analysis";
    std::optional<TensorRange> r;
    if (!node.input(0) || node.input(0)->name().empty() || !node.output(0)) {
      why = "no input 0";
    } else if (qop == dialect::Op::kQuant) {
      r = quant(node, &why);
    } else if (qop == dialect::Op::kBipolarQuant) {
      r = bipolar_quant(node, &why);
    } else if (qop == dialect::Op::kMultiThreshold) {
      r = multithreshold(node, &why);
    } else if (qop == dialect::Op::kTrunc) {
      r = by_kernel_at_ends(node, &why, 0);
    } else if (qop == dialect::Op::kFloatQuant) {
      r = float_quant(node, &why);
    } else if (qop == dialect::Op::kQuantAvgPool2d) {
      r = by_kernel_at_ends(node, &why, 0, /*spatial_reduction=*/true);
    } else if (qop != dialect::Op::kNone || !node.domain().empty()) {
      // another QONNX op or a custom domain: not handled (yet)
    } else if (op == "Relu") {
      r = relu(node);
    } else if (op == "Clip") {
      r = clip(node, &why);
    } else if (op == "MaxPool") {
      r = max_pool(node, &why);
    } else if (op == "GlobalMaxPool") {
      r = range_of(node.input(0));
    } else if (op == "AveragePool" || op == "GlobalAveragePool") {
      r = average_pool(node, &why);
    } else if (op == "Identity" || op == "Dropout") {
      r = range_of(node.input(0));
    } else if (op == "Transpose") {
      r = transpose(node);
    } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Slice" ||
               op == "Gather" || op == "GatherElements" || op == "GatherND" || op == "Split" || op == "Tile" ||
               op == "Expand" || op == "DepthToSpace" || op == "SpaceToDepth" || op == "Compress" ||
               op == "ReverseSequence" || op == "ReduceMax" || op == "ReduceMin") {
      r = moved(node);
    } else if (op == "Concat") {
      r = concat(node, &why);
    } else if (op == "Pad") {
      r = pad(node, &why);
    } else if (op == "Resize" || op == "Upsample") {
      r = resize(node, &why);
    } else if (op == "ReduceSum" || op == "ReduceMean") {
      r = reduce_sum(node, &why);
    } else if (op == "Softmax" || op == "Hardmax") {
      r = softmax(node, &why);
    } else if (op == "Abs") {
      r = abs(node, &why);
    } else if (op == "Min" || op == "Max") {
      r = min_max(node, &why);
    } else if (op == "Neg" || op == "Floor" || op == "Ceil" || op == "Round" || op == "Sqrt" || op == "Cast" ||
               op == "CastLike") {
      r = by_kernel_at_ends(node, &why, 0);
    } else if (op == "Exp" || op == "Log") {
      r = by_kernel_at_ends(node, &why, kLibmMonotoneMargin);
    } else if (op == "Sigmoid" || op == "Tanh" || op == "Erf") {
      r = approximation_bound(node, &why);
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      r = arithmetic(node, &why);
    } else if (op == "BatchNormalization") {
      r = batch_norm(node, &why);
    } else if (op == "MatMul" || op == "Gemm" || op == "Conv" || op == "ConvTranspose") {
      r = linear(node, &why);
    }
    if (!r) return fallback(node, why);
    // Quantizers and MultiThreshold produce float32; the other handled ops keep their input's type
    // (unknown stays unknown, so later arithmetic does not take an integer tensor for a float one).
    // Cast and CastLike produce their declared type (unknown stays unknown).
    const bool float_out = qop != dialect::Op::kNone;
    const bool cast = op == "Cast" || op == "CastLike";
    const DType out_type = float_out ? DType::kFloat : cast ? g_.type_of(node.output(0)).value_or(ir::TypeInfo{}).dtype : dtype_of(node.input(0));
    set(node.output(0), *r, out_type);
    for (size_t i = 1; i < node.outputs().size(); ++i) {
      const ir::Value* o = node.output(i);
      if (!o || o->name().empty()) continue;
      if (op == "Split") {  // every piece holds input values
        set(o, *r, out_type);
        continue;
      }
      TensorRange extra;
      extra.all = type_range(dtype_of(o));
      extra.note = "secondary output: the type's whole range";
      set(o, std::move(extra), dtype_of(o));
    }
  }

  // Ops that are a monotone function of every element of input 0 (the other inputs constant), each
  // output element never decreasing (or never increasing) in each input element: elementwise ops
  // (`whole_input` false: x is one value per channel, [1, C, 1, ...], broadcast against the constants)
  // and pools, reductions and resizes with non-negative weights (`whole_input`: x has its full inferred
  // dims, each channel filled with one end). A float32 sum in a fixed order is monotone in each term,
  // as are max, clamp, every rounding and a division by a positive count, so the node's own kernel run
  // on the two ends gives the exact extremes, padding and empty windows included. `margin_ulps`
  // float32 steps are added on each side for kernels that are monotone only up to that many steps.
  std::optional<TensorRange> by_kernel_at_ends(const ir::Node& node, std::string* why, int margin_ulps,
                                               bool whole_input = false) {
    const ir::Value* x = node.input(0);
    if (dtype_of(x) != DType::kFloat) return everything_with(why, "only float32 inputs are evaluated");
    std::vector<std::optional<Tensor>> holder;
    std::vector<const Tensor*> inputs = stored_input_tensors(node, holder);
    for (size_t i = 1; i < inputs.size(); ++i)
      if (node.input(i) && !node.input(i)->name().empty() && !inputs[i])
        return everything_with(why, fmt::format("input {} is not a constant", i));
    const TensorRange xr = range_of(x);
    const int64_t channels = static_cast<int64_t>(xr.channels.size());
    Dims dims;
    if (whole_input) {
      auto known = g_.dims_of(x);
      if (!known || std::any_of(known->begin(), known->end(), [](int64_t d) { return d < 0; }))
        return everything_with(why, "the input's dims are not known");
      if (channels && (known->size() < 2 || (*known)[1] != channels))
        return everything_with(why, "the input's channel count differs from its range's");
      dims = *known;
    } else {
      int64_t rank = rank_of(x);
      for (size_t i = 1; i < inputs.size(); ++i)
        if (inputs[i] && rank >= 0 && static_cast<int64_t>(inputs[i]->rank()) > rank) rank = -1;  // x is broadcast
      if (rank < 0 && channels) return everything_with(why, "the input's rank is not known");
      dims.assign(static_cast<size_t>(std::max<int64_t>(rank, 1)), 1);
      if (channels) dims[1] = channels;
    }
    const int64_t inner = [&] {
      int64_t n = 1;
      for (size_t d = 2; d < dims.size(); ++d) n *= dims[d];
      return n;
    }();
    std::vector<Tensor> ends;
    for (bool upper : {false, true}) {
      Tensor t(DType::kFloat, dims);
      float* p = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        const Interval c = channels ? xr.channels[static_cast<size_t>((i / inner) % channels)] : xr.all;
        p[i] = static_cast<float>(upper ? c.hi : c.lo);
      }
      std::vector<const Tensor*> args = inputs;
      args[0] = &t;
      auto out = exec::evaluate_node(model_, node, args);
      if (!out.is_ok() || out->empty()) return everything_with(why, "the kernel did not run on the range's ends");
      auto as_double = exec::cast_tensor(out.value()[0], DType::kDouble);
      if (!as_double.is_ok()) return everything_with(why, "the kernel's output is not numeric");
      ends.push_back(std::move(as_double).value());
    }
    const Tensor& lo_end = ends[0];
    const Tensor& hi_end = ends[1];
    if (lo_end.dims() != hi_end.dims()) return everything_with(why, "the kernel's outputs differ in shape");
    // Per channel when the output keeps the input's channels on axis 1.
    const int64_t out_channels = channels && lo_end.rank() >= 2 && lo_end.dim(1) == channels ? channels : 0;
    const int64_t out_inner = out_channels ? lo_end.numel() / std::max<int64_t>(lo_end.dim(0) * channels, 1) : 1;
    TensorRange r;
    std::vector<Interval> hulls(static_cast<size_t>(std::max<int64_t>(out_channels, 1)), Interval{kInf, -kInf});
    const double* a = lo_end.data<double>();
    const double* b = hi_end.data<double>();
    for (int64_t i = 0; i < lo_end.numel(); ++i) {
      Interval& h = hulls[out_channels ? static_cast<size_t>((i / out_inner) % out_channels) : 0];
      if (std::isnan(a[i]) || std::isnan(b[i])) h = everything();  // no value to bound this side by
      else h = hull(h, {std::min(a[i], b[i]), std::max(a[i], b[i])});
    }
    for (Interval& h : hulls) {
      if (h.lo > h.hi) h = {0, 0};  // an empty output
      for (int k = 0; k < margin_ulps; ++k) h = {std::nextafter(static_cast<float>(h.lo), -INFINITY), std::nextafter(static_cast<float>(h.hi), INFINITY)};
    }
    if (out_channels) r.channels = std::move(hulls);
    else r.all = hulls[0];
    return r;
  }

  // Sigmoid, Tanh and Erf (float32): the measured outer bounds of the kernels' approximations; Tanh and
  // Erf narrowed to the kernel at the range's ends within their measured non-monotonicity.
  std::optional<TensorRange> approximation_bound(const ir::Node& node, std::string* why) {
    if (dtype_of(node.input(0)) != DType::kFloat) return everything_with(why, "only float32 is bounded");
    const std::string& op = node.op_type();
    const double top = op == "Sigmoid" ? kSigmoidMax : op == "Tanh" ? kTanhMax : kErfMax;
    const Interval outer{op == "Sigmoid" ? 0.0 : -top, top};
    if (op == "Tanh" || op == "Erf") {
      std::string unused;
      if (auto r = by_kernel_at_ends(node, &unused, op == "Tanh" ? kTanhMonotoneMargin : kErfMonotoneMargin)) {
        auto inside = [&](Interval i) { return Interval{std::max(i.lo, outer.lo), std::min(i.hi, outer.hi)}; };
        r->all = inside(r->all);
        for (Interval& c : r->channels) c = inside(c);
        return r;
      }
    }
    TensorRange r;
    r.all = outer;
    r.note = fmt::format("{} ({}): the approximation's outer bound, not narrowed by the input range", node.name(), op);
    return r;
  }

  // FloatQuant: q = step * round(t / step), t = x / s, with step = 2^(floor(log2(|t| + eps)) - m) (at
  // least the subnormal step). Its float32 log2 rounds up just below a power of two, so q is not
  // monotone in t (FLOOR: t just below 2^e takes the coarser step and a lower value). Every rounding
  // mode gives an integer next to t / step, so q lies between t rounded down and up to its step's
  // grid; the steps are nested powers of two, so rounding to the coarsest step S any |t| in the range
  // can take bounds every q: floor(t_lo / S) S <= q <= ceil(t_hi / S) S. Then the clamp (or +-inf
  // without saturation) and y = v * s rounded once, both monotone.
  std::optional<TensorRange> float_quant(const ir::Node& node, std::string* why) {
    std::vector<std::optional<Tensor>> holder;
    std::vector<const Tensor*> in = input_tensors(node, holder);
    if (in.size() != 6) return everything_with(why, "FloatQuant takes 6 inputs");
    double params[4];  // exponent bits, mantissa bits, exponent bias, max_val
    for (size_t i = 2; i < 6; ++i) {
      if (!in[i] || in[i]->numel() != 1) return everything_with(why, "the format parameters are not constant scalars");
      params[i - 2] = in[i]->data<float>()[0];
    }
    if (!in[1]) return everything_with(why, "the scale is not a constant");
    auto saturation = node.attr<int64_t>("saturation", 1);
    if (!saturation.is_ok()) return everything_with(why, "unreadable saturation");
    const double m = params[1], bias = params[2];
    double limit = quant::float_format_max_value(params[0], m, bias);
    limit = std::min(limit, params[3]);
    const ir::Value* x = node.input(0);
    const TensorRange xr = range_of(x);
    const int64_t channels = channels_for(x, xr, 0);
    const auto scales = per_axis(*in[1], rank_of(x), 1, std::max<int64_t>(channels, 1));
    if (!scales || (channels == 0 && scales->size() != 1))
      return everything_with(why, "the scale is neither a scalar nor one per channel");
    auto bound = [&](Interval xi, float sc) -> Interval {
      const double t_lo = static_cast<float>(xi.lo) / sc, t_hi = static_cast<float>(xi.hi) / sc;
      const double widest = std::max(std::fabs(t_lo), std::fabs(t_hi));
      double q_lo = -kInf, q_hi = kInf;
      if (std::isfinite(widest)) {
        const int top = std::ilogb(widest + std::ldexp(1.0, -126)) + 1;  // floor(log2(|t| + eps)) <= top
        const double step = std::ldexp(1.0, static_cast<int>(std::max(top - m, 1 - bias - m)));
        q_lo = std::floor(t_lo / step) * step;
        q_hi = std::ceil(t_hi / step) * step;
      }
      const bool saturate = saturation.value() != 0;
      auto clamp = [&](double q) { return q > limit ? (saturate ? limit : kInf) : q < -limit ? (saturate ? -limit : -kInf) : q; };
      const float a = static_cast<float>(clamp(q_lo) * sc), b = static_cast<float>(clamp(q_hi) * sc);
      return {std::min(a, b), std::max(a, b)};
    };
    TensorRange r;
    if (channels == 0) r.all = bound(xr.all, (*scales)[0]);
    for (int64_t c = 0; c < channels; ++c) r.channels.push_back(bound(xr.channel(static_cast<size_t>(c)), (*scales)[static_cast<size_t>(c)]));
    return r;
  }

  // Ops that only move (or select) input values: the input's range, per tensor.
  TensorRange moved(const ir::Node& node) { return per_tensor(range_of(node.input(0))); }

  // MaxPool: every output is the max of in-bounds input values (padding never contributes); a window
  // with no input value in it gives -inf. With known dims the kernel at the ends says exactly.
  std::optional<TensorRange> max_pool(const ir::Node& node, std::string* why) {
    if (auto exact = by_kernel_at_ends(node, why, 0, true)) {
      // No empty window (the low end is finite): every output is one of the input's values, on its grid.
      const TensorRange& in = range_of(node.input(0));
      if (in.scaled_int && std::isfinite(exact->all.lo) && exact->all.lo >= in.all.lo) exact->scaled_int = in.scaled_int;
      return exact;
    }
    TensorRange r = range_of(node.input(0));
    auto ceil_mode = node.attr<int64_t>("ceil_mode", 0);
    bool padded = node.attr_string("auto_pad", "NOTSET") != "NOTSET" || !ceil_mode.is_ok() || ceil_mode.value() != 0;
    for (int64_t p : node.attr_ints("pads")) padded = padded || p != 0;
    if (padded) {
      r = map_monotone(r, [](double v) { return v; });
      for (Interval& c : r.channels) c.lo = -kInf;
      r.all.lo = -kInf;
      r.note = fmt::format("{} (MaxPool): padded, input dims unknown: a window may hold no value (-inf)", node.name());
    }
    return r;
  }

  std::optional<TensorRange> average_pool(const ir::Node& node, std::string* why) {
    return by_kernel_at_ends(node, why, 0, true);
  }

  std::optional<TensorRange> reduce_sum(const ir::Node& node, std::string* why) {
    return by_kernel_at_ends(node, why, 0, true);
  }

  // Resize: nearest and (bi/tri)linear read each output as a combination of inputs with weights >= 0
  // (monotone); cubic's weights go negative (it overshoots): not bounded here.
  std::optional<TensorRange> resize(const ir::Node& node, std::string* why) {
    const std::string mode = node.attr_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "trilinear")
      return everything_with(why, fmt::format("mode '{}' can overshoot its inputs", mode));
    if (auto exact = by_kernel_at_ends(node, why, 0, true)) return exact;
    if (mode != "nearest") return std::nullopt;
    // Nearest only moves values (tf_crop_and_resize's extrapolation value joins them).
    TensorRange r = per_tensor(range_of(node.input(0)));
    if (node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
      auto e = node.attr<float>("extrapolation_value", 0.0f);
      if (!e.is_ok()) return everything_with(why, "unreadable extrapolation_value");
      r.all = hull(r.all, {e.value(), e.value()});
      r.scaled_int.reset();
    }
    return r;
  }

  // Concat: the hull of its inputs (per channel when concatenating along axis 1 channel lists).
  std::optional<TensorRange> concat(const ir::Node& node, std::string* why) {
    std::vector<TensorRange> parts;
    for (const ir::Value* v : node.inputs()) {
      if (!v || v->name().empty()) continue;
      if (dtype_of(v) != dtype_of(node.input(0))) return everything_with(why, "inputs of different types");
      parts.push_back(range_of(v));
    }
    const int64_t rank = rank_of(node.input(0));
    auto axis_attr = node.attr<int64_t>("axis", 0);
    if (!axis_attr.is_ok()) return everything_with(why, "unreadable axis");
    int64_t axis = axis_attr.value();
    if (axis < 0 && rank >= 0) axis += rank;
    TensorRange r;
    const bool along_channels = axis == 1 && std::all_of(parts.begin(), parts.end(), [](const TensorRange& p) { return !p.channels.empty(); });
    r.all = {kInf, -kInf};
    for (const TensorRange& p : parts) {
      r.all = hull(r.all, p.all);
      if (along_channels) r.channels.insert(r.channels.end(), p.channels.begin(), p.channels.end());
    }
    // One integer form when every part has the same single scale and zero point.
    const auto& first = parts[0].scaled_int;
    bool same_grid = first && uniform_scale(*first);
    for (const TensorRange& p : parts)
      same_grid = same_grid && p.scaled_int && uniform_scale(*p.scaled_int) && p.scaled_int->scale[0] == first->scale[0] &&
                  std::all_of(p.scaled_int->zero_point.begin(), p.scaled_int->zero_point.end(),
                              [&](double z) { return z == first->zero_point[0]; });
    if (same_grid && !along_channels) {
      ScaledInt si{{first->scale[0]}, {first->zero_point[0]}, {std::numeric_limits<int64_t>::max()}, {std::numeric_limits<int64_t>::min()}};
      for (const TensorRange& p : parts) {
        si.lo[0] = std::min(si.lo[0], *std::min_element(p.scaled_int->lo.begin(), p.scaled_int->lo.end()));
        si.hi[0] = std::max(si.hi[0], *std::max_element(p.scaled_int->hi.begin(), p.scaled_int->hi.end()));
      }
      r.scaled_int = std::move(si);
    } else if (same_grid) {
      ScaledInt si;
      for (const TensorRange& p : parts) {
        const ScaledInt& s = *p.scaled_int;
        for (size_t c = 0; c < p.channels.size(); ++c) {
          si.scale.push_back(s.scale[0]);
          si.zero_point.push_back(s.zero_point[s.zero_point.size() == 1 ? 0 : c]);
          si.lo.push_back(s.lo[s.lo.size() == 1 ? 0 : c]);
          si.hi.push_back(s.hi[s.hi.size() == 1 ? 0 : c]);
        }
      }
      r.scaled_int = std::move(si);
    }
    return r;
  }

  // Pad: constant mode adds its value (input 2, or the `value` attribute before opset 11, default 0);
  // edge, reflect and wrap only repeat input values.
  std::optional<TensorRange> pad(const ir::Node& node, std::string* why) {
    TensorRange r = per_tensor(range_of(node.input(0)));
    if (node.attr_string("mode", "constant") != "constant") return r;
    auto value_attr = node.attr<float>("value", 0.0f);
    if (!value_attr.is_ok()) return everything_with(why, "unreadable value");
    double value = value_attr.value();
    if (node.inputs().size() > 2 && node.input(2) && !node.input(2)->name().empty()) {
      auto c = constant(node.input(2));
      if (!c || c->numel() != 1) return everything_with(why, "the constant value is not a constant scalar");
      value = c->data<float>()[0];
    }
    r.all = hull(r.all, {value, value});
    if (r.scaled_int && value == 0) {  // 0 is the integer 0 on any grid
      r.scaled_int->lo[0] = std::min<int64_t>(r.scaled_int->lo[0], 0);
      r.scaled_int->hi[0] = std::max<int64_t>(r.scaled_int->hi[0], 0);
    } else {
      r.scaled_int.reset();
    }
    return r;
  }

  // Softmax: e_j * (1 / sum) with every e_j >= 0 and the row's largest exp(0) = 1 among the terms of
  // the float sum, so sum >= e_j and each output is e_j / sum <= 1 up to the two roundings (the
  // reciprocal and the product): [0, 1 + 2^-22] holds them. Hardmax writes 0 and 1.
  std::optional<TensorRange> softmax(const ir::Node& node, std::string* why) {
    if (dtype_of(node.input(0)) != DType::kFloat) return everything_with(why, "only float32 is bounded");
    TensorRange r;
    r.all = {0.0, node.op_type() == "Hardmax" ? 1.0 : 1.0 + std::ldexp(1.0, -22)};
    return r;
  }

  // Abs is exact in float32: the largest magnitude, and 0 when the range holds it.
  std::optional<TensorRange> abs(const ir::Node& node, std::string* why) {
    if (dtype_of(node.input(0)) != DType::kFloat) return everything_with(why, "only float32 is bounded");
    auto f = [](Interval i) -> Interval {
      const double m = std::max(std::fabs(i.lo), std::fabs(i.hi));
      return {i.lo <= 0 && i.hi >= 0 ? 0.0 : std::min(std::fabs(i.lo), std::fabs(i.hi)), m};
    };
    const TensorRange xr = range_of(node.input(0));
    TensorRange r;
    r.all = f(xr.all);
    for (const Interval& c : xr.channels) r.channels.push_back(f(c));
    return r;
  }

  // Min / Max of any number of broadcast inputs: monotone in each, no rounding.
  std::optional<TensorRange> min_max(const ir::Node& node, std::string* why) {
    const bool is_max = node.op_type() == "Max";
    std::optional<Interval> acc;
    for (const ir::Value* v : node.inputs()) {
      if (!v || v->name().empty()) continue;
      if (dtype_of(v) != DType::kFloat) return everything_with(why, "only float32 is bounded");
      const Interval i = range_of(v).all;
      acc = !acc ? i : is_max ? Interval{std::max(acc->lo, i.lo), std::max(acc->hi, i.hi)}
                              : Interval{std::min(acc->lo, i.lo), std::min(acc->hi, i.hi)};
    }
    if (!acc) return everything_with(why, "no inputs");
    TensorRange r;
    r.all = *acc;
    return r;
  }

  // Channels along axis 1 dropped (the data moves); a per-tensor scaled-int form stays.
  static TensorRange per_tensor(TensorRange r) {
    r.channels.clear();
    if (r.scaled_int && !uniform_scale(*r.scaled_int)) r.scaled_int.reset();
    if (r.scaled_int && r.scaled_int->lo.size() != 1) {
      const ScaledInt& s = *r.scaled_int;
      r.scaled_int = ScaledInt{{s.scale[0]}, {s.zero_point[0]}, {*std::min_element(s.lo.begin(), s.lo.end())},
                               {*std::max_element(s.hi.begin(), s.hi.end())}};
    }
    return r;
  }

  TensorRange transpose(const ir::Node& node) {
    TensorRange in = range_of(node.input(0));
    const std::vector<int64_t> perm = node.attr_ints("perm");
    if (perm.size() >= 2 && perm[1] == 1) return in;
    return per_tensor(std::move(in));
  }

  // Channel count of an output with input x: x's channels, else its dim 1, else `hint`.
  int64_t channels_for(const ir::Value* x, const TensorRange& xr, int64_t hint) const {
    if (!xr.channels.empty()) return static_cast<int64_t>(xr.channels.size());
    if (int64_t c = channel_dim(x)) return c;
    return hint;
  }

  // The constant inputs as stored (the kernels check their types: axes, sizes and pads are int64).
  std::vector<const Tensor*> stored_input_tensors(const ir::Node& node, std::vector<std::optional<Tensor>>& holder) const {
    holder.clear();
    for (const ir::Value* v : node.inputs()) {
      auto t = v && v->is_initializer() ? g_.initializer_tensor(v) : Result<Tensor>(Status(Code::kFailed, ""));
      holder.push_back(t.is_ok() ? std::optional<Tensor>(std::move(t).value()) : std::nullopt);
    }
    std::vector<const Tensor*> ptrs;
    for (const auto& t : holder) ptrs.push_back(t ? &*t : nullptr);
    return ptrs;
  }

  // The constant inputs as float32.
  std::vector<const Tensor*> input_tensors(const ir::Node& node, std::vector<std::optional<Tensor>>& holder) const {
    holder.clear();
    for (const ir::Value* v : node.inputs()) holder.push_back(constant(v));
    std::vector<const Tensor*> ptrs;
    for (const auto& t : holder) ptrs.push_back(t ? &*t : nullptr);
    return ptrs;
  }

  // Quant: the code is a monotone function of x for each (scale, zero point) (float division and
  // addition are monotone, so are clamp and every rounding mode), and so is (code - z) * s of the
  // code; evaluated at the interval ends with the kernel's float32 formulas the bounds are exact.
  std::optional<TensorRange> quant(const ir::Node& node, std::string* why) {
    std::vector<std::optional<Tensor>> holder;
    auto tensors = input_tensors(node, holder);
    auto params = quant::read_quant_params(quant::NodeInputs(node, tensors));
    if (!params.is_ok()) {
      *why = params.status().message();
      return std::nullopt;
    }
    const quant::QuantParams& p = params.value();
    const quant::IntRange ir = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    const ir::Value* x = node.input(0);
    const TensorRange xr = range_of(x);
    const int64_t rank = rank_of(x);
    int64_t channels = channels_for(x, xr, 0);
    if (channels == 0 && rank >= 2) {
      for (const Tensor* t : {&p.scale, &p.zeropt})
        if (t->numel() > 1 && static_cast<int64_t>(t->rank()) == rank) channels = t->dim(1);
    }
    const auto scales = per_axis(p.scale, rank, 1, std::max<int64_t>(channels, 1));
    const auto zeros = per_axis(p.zeropt, rank, 1, std::max<int64_t>(channels, 1));
    TensorRange r;
    if (scales && zeros && (channels > 0 || (scales->size() == 1 && zeros->size() == 1))) {
      const size_t n = std::max<size_t>(static_cast<size_t>(channels), 1);
      ScaledInt si;
      bool integral_zero = true;
      for (size_t c = 0; c < n; ++c) {
        const float s = (*scales)[c], z = (*zeros)[c];
        const Interval xi = xr.channel(channels > 0 ? c : SIZE_MAX);
        const float a = quant::quant_code(static_cast<float>(xi.lo), s, z, ir, p);
        const float b = quant::quant_code(static_cast<float>(xi.hi), s, z, ir, p);
        const float qlo = std::min(a, b), qhi = std::max(a, b);
        const float ya = (qlo - z) * s, yb = (qhi - z) * s;
        r.channels.push_back({std::min(ya, yb), std::max(ya, yb)});
        integral_zero = integral_zero && is_integral(z);
        si.scale.push_back(s);
        si.zero_point.push_back(z);
        si.lo.push_back(static_cast<int64_t>(qlo) - static_cast<int64_t>(z));
        si.hi.push_back(static_cast<int64_t>(qhi) - static_cast<int64_t>(z));
      }
      if (integral_zero) r.scaled_int = std::move(si);
      if (channels == 0) {
        r.all = r.channels[0];
        r.channels.clear();
      }
      return r;
    }
    // Parameters varying along other axes: every code, and (q - z) * s at the corners of the box of
    // codes, zero points and scales (monotone in each of them with the others fixed).
    const float qlo = p.bipolar() ? -1.0f : ir.min, qhi = p.bipolar() ? 1.0f : ir.max;
    const Interval s = tensor_hull(p.scale), z = tensor_hull(p.zeropt);
    r.all = {kInf, -kInf};
    for (float q : {qlo, qhi})
      for (double zv : {z.lo, z.hi})
        for (double sv : {s.lo, s.hi}) {
          const double y = (q - static_cast<float>(zv)) * static_cast<float>(sv);
          r.all = hull(r.all, {y, y});
        }
    r.note = "quantizer parameters vary along an axis other than 1: every code assumed";
    return r;
  }

  std::optional<TensorRange> bipolar_quant(const ir::Node& node, std::string* why) {
    auto scale = constant(node.input(1));
    if (!scale || scale->numel() == 0) {
      *why = "the scale is not a constant";
      return std::nullopt;
    }
    const ir::Value* x = node.input(0);
    const TensorRange xr = range_of(x);
    const int64_t channels = channels_for(x, xr, 0);
    const auto scales = per_axis(*scale, rank_of(x), 1, std::max<int64_t>(channels, 1));
    auto codes = [](Interval xi) {
      return std::pair<float, float>{xi.lo >= 0 ? 1.0f : -1.0f, xi.hi >= 0 ? 1.0f : -1.0f};
    };
    TensorRange r;
    if (!scales || (channels == 0 && scales->size() != 1)) {
      const Interval s = tensor_hull(*scale);
      const auto [a, b] = codes(xr.all);
      r.all = {kInf, -kInf};
      for (float q : {a, b})
        for (double sv : {s.lo, s.hi}) r.all = hull(r.all, {q * static_cast<float>(sv), q * static_cast<float>(sv)});
      return r;
    }
    ScaledInt si;
    for (size_t c = 0; c < scales->size(); ++c) {
      const auto [a, b] = codes(xr.channel(channels > 0 ? c : SIZE_MAX));
      const float s = (*scales)[c];
      r.channels.push_back({std::min(a * s, b * s), std::max(a * s, b * s)});
      si.scale.push_back(s);
      si.zero_point.push_back(0);
      si.lo.push_back(static_cast<int64_t>(a));
      si.hi.push_back(static_cast<int64_t>(b));
    }
    r.scaled_int = std::move(si);
    if (channels == 0) {
      r.all = r.channels[0];
      r.channels.clear();
    }
    return r;
  }

  // MultiThreshold: the count of thresholds reached never decreases as v grows; out_scale * count +
  // out_bias in float32 (two roundings, as the kernel) is monotone in the count.
  std::optional<TensorRange> multithreshold(const ir::Node& node, std::string* why) {
    auto thr = constant(node.input(1));
    if (!thr || thr->rank() != 2) {
      *why = "the thresholds are not a constant (C, T) tensor";
      return std::nullopt;
    }
    auto scale_attr = node.attr<float>("out_scale", 1.0f);
    auto bias_attr = node.attr<float>("out_bias", 0.0f);
    if (!scale_attr.is_ok() || !bias_attr.is_ok()) {
      *why = "unreadable out_scale / out_bias";
      return std::nullopt;
    }
    const float out_scale = scale_attr.value(), out_bias = bias_attr.value();
    const std::string layout = node.attr_string("data_layout", "NCHW");
    const bool channels_last = !layout.empty() && layout.back() == 'C';
    const int64_t rows = thr->dim(0), steps = thr->dim(1);
    const float* t = thr->data<float>();
    auto count = [&](int64_t row, double v) {
      int64_t n = 0;
      for (int64_t k = 0; k < steps; ++k) n += static_cast<float>(v) >= t[row * steps + k] ? 1 : 0;
      return n;
    };
    auto value = [&](int64_t n) -> double { return out_scale * static_cast<float>(n) + out_bias; };
    const ir::Value* x = node.input(0);
    const TensorRange xr = range_of(x);
    int64_t channels = channels_last ? 0 : channels_for(x, xr, rows > 1 ? rows : 0);
    if (channels > 0 && rows != 1 && rows != channels) channels = 0;
    const bool exact_form = out_bias == 0.0f || (out_scale == 1.0f && is_integral(out_bias));
    TensorRange r;
    ScaledInt si;
    const size_t n = std::max<size_t>(static_cast<size_t>(channels), 1);
    for (size_t c = 0; c < n; ++c) {
      int64_t lo, hi;
      if (channels > 0) {
        const int64_t row = rows == 1 ? 0 : static_cast<int64_t>(c);
        const Interval xi = xr.channel(c);
        lo = count(row, xi.lo);
        hi = count(row, xi.hi);
      } else {
        lo = steps;
        hi = 0;
        for (int64_t row = 0; row < rows; ++row) {
          lo = std::min(lo, count(row, xr.all.lo));
          hi = std::max(hi, count(row, xr.all.hi));
        }
      }
      r.channels.push_back({std::min(value(lo), value(hi)), std::max(value(lo), value(hi))});
      const int64_t shift = out_scale == 1.0f ? static_cast<int64_t>(out_bias) : 0;
      si.scale.push_back(out_scale);
      si.zero_point.push_back(0);
      si.lo.push_back(lo + shift);
      si.hi.push_back(hi + shift);
    }
    if (exact_form) r.scaled_int = std::move(si);
    if (channels == 0) {
      r.all = r.channels[0];
      r.channels.clear();
    }
    return r;
  }

  template <class F>
  static TensorRange map_monotone(const TensorRange& in, F f) {
    TensorRange r;
    r.all = {f(in.all.lo), f(in.all.hi)};
    for (const Interval& c : in.channels) r.channels.push_back({f(c.lo), f(c.hi)});
    return r;
  }

  TensorRange relu(const ir::Node& node) {
    const TensorRange in = range_of(node.input(0));
    TensorRange r = map_monotone(in, [](double v) { return std::max(v, 0.0); });
    if (in.scaled_int) {
      bool positive = true;
      for (double s : in.scaled_int->scale) positive = positive && s > 0;
      if (positive) {
        ScaledInt si = *in.scaled_int;
        for (auto& v : si.lo) v = std::max<int64_t>(v, 0);
        for (auto& v : si.hi) v = std::max<int64_t>(v, 0);
        r.scaled_int = std::move(si);
      }
    }
    return r;
  }

  // Clip = min(max(x, lo), hi) (min > max gives max everywhere, as the kernel): monotone in x, lo and
  // hi, so a bound given by another tensor (a scalar at run time) enters with its range's ends.
  std::optional<TensorRange> clip(const ir::Node& node, std::string* why) {
    Interval lo{-kInf, -kInf}, hi{kInf, kInf};
    if (node.inputs().size() > 1) {
      for (size_t i = 1; i < 3 && i < node.inputs().size(); ++i) {
        const ir::Value* v = node.input(i);
        if (!v || v->name().empty()) continue;
        if (dtype_of(v) != DType::kFloat) return everything_with(why, "a bound is not float32");
        (i == 1 ? lo : hi) = range_of(v).all;
      }
    } else {  // Clip 6-10: attributes
      auto min_attr = node.attr<float>("min", -INFINITY);
      auto max_attr = node.attr<float>("max", INFINITY);
      if (!min_attr.is_ok() || !max_attr.is_ok()) {
        *why = "unreadable min / max";
        return std::nullopt;
      }
      lo = {min_attr.value(), min_attr.value()};
      hi = {max_attr.value(), max_attr.value()};
    }
    const TensorRange xr = range_of(node.input(0));
    auto f = [&](Interval x) -> Interval {
      return {std::min(std::max(x.lo, lo.lo), hi.lo), std::min(std::max(x.hi, lo.hi), hi.hi)};
    };
    TensorRange r;
    r.all = f(xr.all);
    for (const Interval& c : xr.channels) r.channels.push_back(f(c));
    return r;
  }

  // BatchNormalization in inference mode with constant float32 parameters, one per channel: the kernel's
  // y = x * a + b with a = (1 / sqrt(var + eps)) * scale and b = B - mean * a, all float32, is monotone
  // in x, so its values at the channel's ends are the exact extremes.
  std::optional<TensorRange> batch_norm(const ir::Node& node, std::string* why) {
    auto training = node.attr<int64_t>("training_mode", 0);
    auto epsilon = node.attr<float>("epsilon", 1e-5f);
    if (!training.is_ok() || training.value() != 0 || node.outputs().size() != 1 || node.has_attr("spatial") ||
        node.has_attr("is_test") || !epsilon.is_ok() || dtype_of(node.input(0)) != DType::kFloat)
      return everything_with(why, "only the inference form on float32 is bounded");
    std::vector<Tensor> params;
    for (size_t i = 1; i < 5; ++i) {
      auto c = constant(node.input(i));
      if (!c || dtype_of(node.input(i)) != DType::kFloat || c->rank() != 1)
        return everything_with(why, "the parameters are not constant float32 vectors");
      params.push_back(std::move(*c));
    }
    const int64_t channels = params[0].numel();
    for (const Tensor& p : params)
      if (p.numel() != channels) return everything_with(why, "parameters of different lengths");
    const TensorRange xr = range_of(node.input(0));
    if (!xr.channels.empty() && static_cast<int64_t>(xr.channels.size()) != channels)
      return everything_with(why, "the input's channel count differs from the parameters'");
    const float eps = epsilon.value();
    TensorRange r;
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = params[0].data<float>()[c], bias = params[1].data<float>()[c];
      const float mean = params[2].data<float>()[c], var = params[3].data<float>()[c];
      const float a = 1.0f / std::sqrt(var + eps) * scale;
      const float b = bias - mean * a;
      const Interval xi = xr.channel(static_cast<size_t>(c));
      const float y1 = static_cast<float>(xi.lo) * a + b, y2 = static_cast<float>(xi.hi) * a + b;
      if (std::isnan(y1) || std::isnan(y2)) return everything_with(why, "no finite bound (inf times 0, or NaN parameters)");
      r.channels.push_back({std::min(y1, y2), std::max(y1, y2)});
    }
    return r;
  }

  // Add/Sub/Mul/Div of two independent ranges in float32: each is monotone in either operand with
  // the other fixed, so the extremes over a box are at its corners.
  std::optional<TensorRange> arithmetic(const ir::Node& node, std::string* why) {
    const ir::Value* a = node.input(0);
    const ir::Value* b = node.input(1);
    if (!b || dtype_of(a) != DType::kFloat || dtype_of(b) != DType::kFloat) {
      *why = "only float32 arithmetic is bounded";
      return std::nullopt;
    }
    const TensorRange ar = range_of(a), br = range_of(b);
    const std::string& op = node.op_type();
    auto corners = [&](Interval x, Interval y) -> std::optional<Interval> {
      if (op == "Div" && y.lo <= 0 && y.hi >= 0) return std::nullopt;
      Interval h{kInf, -kInf};
      for (double xv : {x.lo, x.hi})
        for (double yv : {y.lo, y.hi}) {
          const float xf = static_cast<float>(xv), yf = static_cast<float>(yv);
          const float v = op == "Add" ? xf + yf : op == "Sub" ? xf - yf : op == "Mul" ? xf * yf : xf / yf;
          if (std::isnan(v)) return std::nullopt;  // inf - inf, 0 * inf: no bound from the corners
          h = hull(h, {v, v});
        }
      return h;
    };
    // Channels of an operand line up with the output's axis 1 when it has the output's rank.
    auto out_dims = g_.dims_of(node.output(0));
    const int64_t out_rank = out_dims ? static_cast<int64_t>(out_dims->size()) : -1;
    auto aligned = [&](const ir::Value* v, const TensorRange& r) {
      return out_rank >= 2 && rank_of(v) == out_rank && r.channels.size() > 1;
    };
    const bool a_ch = aligned(a, ar), b_ch = aligned(b, br);
    TensorRange r;
    if (a_ch || b_ch) {
      const size_t n = a_ch ? ar.channels.size() : br.channels.size();
      if (a_ch && b_ch && ar.channels.size() != br.channels.size()) return everything_with(why, "channel counts differ");
      for (size_t c = 0; c < n; ++c) {
        auto v = corners(a_ch ? ar.channels[c] : ar.all, b_ch ? br.channels[c] : br.all);
        if (!v) return everything_with(why, "no finite bound (division by a range holding 0, or inf - inf)");
        r.channels.push_back(*v);
      }
    } else {
      auto v = corners(ar.all, br.all);
      if (!v) return everything_with(why, "no finite bound (division by a range holding 0, or inf - inf)");
      r.all = *v;
    }
    if (op == "Add" || op == "Sub") {
      // Equal ranks: both operands' axis 1 is the output's.
      r.scaled_int = sum_on_one_grid(op == "Sub", ar, br, rank_of(a) >= 0 && rank_of(a) == rank_of(b));
    } else {
      r.scaled_int = scaled_by_power_of_two(node, 0, 1);
      if (!r.scaled_int && op == "Mul") r.scaled_int = scaled_by_power_of_two(node, 1, 0);
    }
    return r;
  }

  // A scaled-int form collapsed to one integer range (nullopt when the channels' scales differ).
  static std::optional<ScaledInt> one_range(const ScaledInt& s) {
    if (!uniform_scale(s)) return std::nullopt;
    return ScaledInt{{s.scale[0]}, {0.0}, {*std::min_element(s.lo.begin(), s.lo.end())}, {*std::max_element(s.hi.begin(), s.hi.end())}};
  }

  // Add / Sub of two tensors on one power-of-two grid s = 2^e: a = n_a s and b = n_b s are float32
  // values and so is (n_a +- n_b) s while |n_a +- n_b| < 2^24 (and e >= -149, no overflow), so the
  // float32 addition is exact and the result is on the grid with the integers' sum range. Per channel
  // when both operands have the output's rank and one integer range per channel each.
  static std::optional<ScaledInt> sum_on_one_grid(bool subtract, const TensorRange& ar, const TensorRange& br, bool aligned) {
    if (!ar.scaled_int || !br.scaled_int) return std::nullopt;
    std::optional<ScaledInt> a = *ar.scaled_int, b = *br.scaled_int;
    const bool per_channel = aligned && a->lo.size() > 1 && a->lo.size() == b->lo.size();
    if (!per_channel) {
      a = one_range(*a);
      b = one_range(*b);
    }
    if (!a || !b || !uniform_scale(*a) || !uniform_scale(*b) || a->scale[0] != b->scale[0]) return std::nullopt;
    const std::optional<int> e = power_of_two_exponent(a->scale[0]);
    if (!e || *e < -149 || *e > 100) return std::nullopt;
    constexpr int64_t kExact = int64_t{1} << 24;
    ScaledInt out;
    for (size_t c = 0; c < a->lo.size(); ++c) {
      const int64_t lo = subtract ? a->lo[c] - b->hi[c] : a->lo[c] + b->lo[c];
      const int64_t hi = subtract ? a->hi[c] - b->lo[c] : a->hi[c] + b->hi[c];
      if (lo <= -kExact || hi >= kExact) return std::nullopt;
      out.scale.push_back(a->scale[0]);
      out.zero_point.push_back(0);
      out.lo.push_back(lo);
      out.hi.push_back(hi);
    }
    return out;
  }

  // Mul of input `x` by (or Div by) input `factor`, a constant scalar 2^k > 0: n s 2^k rounds as n s
  // does while every non-zero value stays a normal float32 (|n| >= 1: s 2^min(k, 0) >= 2^-126) and
  // finite (max |n| s 2^max(k, 0) < 2^127), so the product is exact and the integers keep their range
  // and zero point with the scale times 2^k. Per-channel forms need x's axis 1 to stay the output's
  // (the factor's rank not above x's).
  std::optional<ScaledInt> scaled_by_power_of_two(const ir::Node& node, size_t x, size_t factor) {
    const TensorRange xr = range_of(node.input(x));
    const auto f = constant(node.input(factor));
    if (!xr.scaled_int || !f || f->numel() != 1) return std::nullopt;
    std::optional<int> k = power_of_two_exponent(f->data<float>()[0]);
    if (!k) return std::nullopt;
    if (node.op_type() == "Div") *k = -*k;
    std::optional<ScaledInt> out = *xr.scaled_int;
    const int64_t x_rank = rank_of(node.input(x));
    if (out->lo.size() > 1 && (x_rank < 0 || static_cast<int64_t>(f->rank()) > x_rank)) out = one_range(*out);
    if (!out) return std::nullopt;
    for (size_t c = 0; c < out->lo.size(); ++c) {
      const double s = std::fabs(out->scale[out->scale.size() == 1 ? 0 : c]);
      const double largest = std::max(std::fabs(static_cast<double>(out->lo[c])), std::fabs(static_cast<double>(out->hi[c])));
      if (s * std::ldexp(1.0, std::min(*k, 0)) < std::ldexp(1.0, -126) ||
          largest * s * std::ldexp(1.0, std::max(*k, 0)) >= std::ldexp(1.0, 127))
        return std::nullopt;
    }
    for (double& s : out->scale) s = std::ldexp(s, *k);
    return out;
  }
  static std::optional<TensorRange> everything_with(std::string* why, const std::string& reason) {
    *why = reason;
    return std::nullopt;
  }

  // MatMul (x [.., K] times constant [K, C]), Gemm (any transA / transB / alpha / beta, C any
  // constant that broadcasts) and Conv / ConvTranspose with a constant weight. The value range bounds
  // the exact sum in double and widens it by the float32 summation error; with integer-valued inputs
  // and integral weights the integer accumulator range is exact.
  std::optional<TensorRange> linear(const ir::Node& node, std::string* why) {
    const std::string& op = node.op_type();
    const ir::Value* x = node.input(0);
    bool trans_a = false, trans_b = false;
    float alpha = 1.0f, beta = 1.0f;
    if (op == "Gemm") {
      auto ta = node.attr<int64_t>("transA", 0);
      auto tb = node.attr<int64_t>("transB", 0);
      auto alpha_attr = node.attr<float>("alpha", 1.0f);
      auto beta_attr = node.attr<float>("beta", 1.0f);
      if (!ta.is_ok() || !tb.is_ok() || !alpha_attr.is_ok() || !beta_attr.is_ok())
        return everything_with(why, "unreadable Gemm attributes");
      trans_a = ta.value() != 0;
      trans_b = tb.value() != 0;
      alpha = alpha_attr.value();
      beta = beta_attr.value();
    }
    if (dtype_of(x) != DType::kFloat)
      return everything_with(why, "only float32 layers are bounded (integer types wrap around)");
    // The weight's output-channel axis: Conv [C, Cin/g, k..], ConvTranspose [Cin, C/g, k..].
    const int64_t weight_out_axis = op == "Conv" || trans_b ? 0 : 1;
    auto cw = const_weight(node.input(1), weight_out_axis);
    if (!cw) {
      *why = "the weight is neither a constant nor a Quant of constants with per-output-channel parameters";
      return std::nullopt;
    }
    const Tensor* w = &cw->value;
    std::optional<Tensor> bias;
    if (op != "MatMul" && node.inputs().size() > 2 && node.input(2) && !node.input(2)->name().empty()) {
      bias = constant(node.input(2));
      if (!bias) {
        *why = "the bias is not a constant";
        return std::nullopt;
      }
    }
    const TensorRange xr = range_of(x);
    // Layer geometry: out channels C, terms K per sum; term (c, k) reads input channel in_ch(c, k)
    // and weight element index(c, k).
    int64_t C = 0, K = 0;
    std::function<int64_t(int64_t, int64_t)> index;  // element of the weight read by term (c, k)
    std::function<int64_t(int64_t, int64_t)> in_ch;  // -1: the whole input range
    // Which kernel taps (k % area) an output position reads inside the input: one mask per distinct
    // pattern. Unknown geometry: every tap may be missing, i.e. read a 0 (`pad_hull`).
    int64_t area = 1;
    std::vector<std::vector<char>> masks{{1}};
    bool pad_hull = false;
    const int64_t x_rank = rank_of(x);
    if (op == "MatMul" || op == "Gemm") {
      if (w->rank() != 2) return everything_with(why, "the weight is not 2-D");
      K = trans_b ? w->dim(1) : w->dim(0);
      C = trans_b ? w->dim(0) : w->dim(1);
      index = [K, C, trans_b](int64_t c, int64_t k) { return trans_b ? c * K + k : k * C + c; };
      // x's channels (axis 1) are the K terms unless Gemm transposes it.
      const bool per_k = !trans_a && x_rank == 2 && static_cast<int64_t>(xr.channels.size()) == K;
      in_ch = [per_k](int64_t, int64_t k) { return per_k ? k : -1; };
    } else {
      if (w->rank() < 3) return everything_with(why, "the weight has rank < 3");
      auto group_attr = node.attr<int64_t>("group", 1);
      if (!group_attr.is_ok()) return everything_with(why, "unreadable group");
      const int64_t group = group_attr.value();
      if (group <= 0 || w->dim(0) % group != 0) return everything_with(why, "bad group");
      const bool transposed = op == "ConvTranspose";
      const int64_t cin_g = transposed ? w->dim(0) / group : w->dim(1);
      const int64_t c_per_group = transposed ? w->dim(1) : w->dim(0) / group;
      C = c_per_group * group;
      area = w->numel() / std::max<int64_t>(w->dim(0) * w->dim(1), 1);
      K = cin_g * area;
      const bool per_ci = static_cast<int64_t>(xr.channels.size()) == cin_g * group;
      if (transposed)  // W[g * cin_g + ci, c % c_per_group, tap]
        index = [cin_g, c_per_group, area](int64_t c, int64_t k) {
          const int64_t ci = (c / c_per_group) * cin_g + k / area;
          return (ci * c_per_group + c % c_per_group) * area + k % area;
        };
      else
        index = [K](int64_t c, int64_t k) { return c * K + k; };
      in_ch = [per_ci, c_per_group, cin_g, area](int64_t c, int64_t k) {
        return per_ci ? (c / c_per_group) * cin_g + k / area : -1;
      };
      masks = {std::vector<char>(static_cast<size_t>(area), 1)};
      auto exact = transposed ? conv_transpose_tap_masks(node, x, *w) : conv_tap_masks(node, x, *w);
      if (exact) masks = std::move(*exact);
      else pad_hull = transposed || conv_may_pad(node);
    }
    // The bias (Gemm's C) per output channel: the range of the values any output of the channel adds.
    std::optional<std::vector<Interval>> bias_c;
    if (bias) {
      bias_c = op == "Gemm" ? gemm_c_columns(*bias, C) : per_axis_intervals(*bias, C);
      if (!bias_c) return everything_with(why, "the bias is not one value per output channel (or Gemm's C does not broadcast)");
    }
    // Gemm rounds the sum, then adds beta * C with alpha in one fma: the sum is bounded alone and the
    // fma (monotone in the sum and in C) evaluated at its ends, as the kernel does.
    const bool gemm_epilogue = op == "Gemm";
    const bool c_read = bias_c && beta != 0.0f;  // beta 0: C is not read
    TensorRange r;
    const float* wp = w->data<float>();
    const std::optional<int> grid = sum_grid(xr, *w, gemm_epilogue ? std::nullopt : bias_c);
    // Whether every sum, the bias (Gemm: beta * C) included, is exact in float32 in any order: the
    // output is then the exact sum, which the integer form below needs.
    const std::optional<int> form_grid = sum_grid(xr, *w, c_read ? bias_c : std::nullopt);
    bool sums_exact = form_grid.has_value();
    for (int64_t c = 0; c < C; ++c) {
      Interval channel{kInf, -kInf};
      for (const std::vector<char>& mask : masks) {
        double lo = 0, hi = 0, abs_sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double wv = wp[index(c, k)];
          if (wv == 0 || !mask[static_cast<size_t>(k % area)]) continue;
          const int64_t ch = in_ch(c, k);
          Interval xi = ch < 0 ? xr.all : xr.channels[static_cast<size_t>(ch)];
          if (pad_hull) xi = hull(xi, {0, 0});  // a missing term is a 0
          const double a = wv * xi.lo, b = wv * xi.hi;
          lo += std::min(a, b);
          hi += std::max(a, b);
          abs_sum += std::max(std::fabs(a), std::fabs(b));
        }
        if (bias_c && !gemm_epilogue) {
          const Interval bv = (*bias_c)[static_cast<size_t>(c)];
          lo += bv.lo;
          hi += bv.hi;
          abs_sum += std::max(std::fabs(bv.lo), std::fabs(bv.hi));
        }
        // On a grid of 2^grid, every product and partial sum of magnitude up to 2^(24 + grid) is an
        // exact float32 (and double): the sum then has no rounding error in any order.
        const bool exact = grid && abs_sum <= std::ldexp(1.0, 24 + *grid);
        const double slack = exact ? 0.0 : float_sum_slack(K + 2, abs_sum);
        if (sums_exact) {
          const Interval cv = gemm_epilogue && c_read ? (*bias_c)[static_cast<size_t>(c)] : Interval{0, 0};
          const double with_c = abs_sum + std::max(std::fabs(cv.lo), std::fabs(cv.hi));
          sums_exact = with_c <= std::ldexp(1.0, 24 + *form_grid);
        }
        lo = std::isnan(lo) ? -kInf : float_down(lo - slack);
        hi = std::isnan(hi) ? kInf : float_up(hi + slack);
        if (gemm_epilogue) {
          const Interval cv = c_read ? (*bias_c)[static_cast<size_t>(c)] : Interval{0, 0};
          Interval y{kInf, -kInf};
          for (double ab : {lo, hi})
            for (double cc : {cv.lo, cv.hi}) {
              const float v = c_read ? std::fma(alpha, static_cast<float>(ab), beta * static_cast<float>(cc))
                                     : alpha * static_cast<float>(ab);
              y = std::isnan(v) ? everything() : hull(y, {v, v});
            }
          lo = y.lo;
          hi = y.hi;
        }
        channel = hull(channel, {lo, hi});
      }
      r.channels.push_back(channel);
    }
    // Conv and Gemm outputs have their channels on axis 1; a MatMul output has them last (axis 1
    // when x is 2-D).
    const bool channel_axis_1 = op != "MatMul" || x_rank == 2;
    if (!channel_axis_1) {
      r.all = hull_of(r.channels);
      r.channels.clear();
    }
    const bool accumulated =
        cw->codes && accumulate(node, xr, C, K, cw->codes->data<float>(), index, in_ch, area, masks, pad_hull);
    // Gemm's epilogue adds nothing to an exact sum when alpha is 1 and beta 1 (or C unread).
    const bool plain_epilogue = !gemm_epilogue || (alpha == 1.0f && (!c_read || beta == 1.0f));
    if (accumulated && sums_exact && plain_epilogue)
      r.scaled_int = linear_integer_form(out_.accumulators.back(), xr.scaled_int->scale[0], *w, cw->codes->data<float>(),
                                         K, index, c_read ? bias_c : std::nullopt, channel_axis_1);
    return r;
  }

  // The integer form of a linear layer's output when every sum is exact: output channel c holds
  // S_c * (N + B_c) with N the integer accumulator (in [acc.lo[c], acc.hi[c]]), S_c = x_scale * w_c where
  // every weight value of the channel is its code times w_c (a float32, so the check is exact), and the
  // bias b_c = B_c * S_c with B_c an integer (the zero point is -B_c). Per channel along axis 1 when
  // `per_channel`, else one form (nullopt unless the channels share scale and zero point).
  static std::optional<ScaledInt> linear_integer_form(const Accumulator& acc, double x_scale, const Tensor& w,
                                                      const float* codes, int64_t K,
                                                      const std::function<int64_t(int64_t, int64_t)>& index,
                                                      const std::optional<std::vector<Interval>>& bias, bool per_channel) {
    const float* values = w.data<float>();
    ScaledInt si;
    for (size_t c = 0; c < acc.lo.size(); ++c) {
      const int64_t ch = static_cast<int64_t>(c);
      double w_scale = 1;  // any scale fits a channel of zero codes
      for (int64_t k = 0; k < K; ++k)
        if (codes[index(ch, k)] != 0) {
          w_scale = static_cast<double>(values[index(ch, k)]) / codes[index(ch, k)];
          break;
        }
      if (!(w_scale > 0) || static_cast<double>(static_cast<float>(w_scale)) != w_scale) return std::nullopt;
      for (int64_t k = 0; k < K; ++k)
        if (static_cast<double>(codes[index(ch, k)]) * w_scale != values[index(ch, k)]) return std::nullopt;
      const double scale = x_scale * w_scale;
      double shift = 0;
      if (bias) {
        const Interval b = (*bias)[c];
        if (b.lo != b.hi) return std::nullopt;
        shift = b.lo / scale;
        if (!is_integral(shift) || shift * scale != b.lo) return std::nullopt;
      }
      const __int128 lo = static_cast<__int128>(acc.lo[c]) + static_cast<int64_t>(shift);
      const __int128 hi = static_cast<__int128>(acc.hi[c]) + static_cast<int64_t>(shift);
      if (clamp_to_int64(lo) != lo || clamp_to_int64(hi) != hi) return std::nullopt;
      si.scale.push_back(scale);
      si.zero_point.push_back(-shift + 0.0);  // + 0.0: no -0
      si.lo.push_back(static_cast<int64_t>(lo));
      si.hi.push_back(static_cast<int64_t>(hi));
    }
    if (si.lo.empty()) return std::nullopt;
    const bool one_zero_point = std::all_of(si.zero_point.begin(), si.zero_point.end(),
                                            [&](double z) { return z == si.zero_point[0]; });
    if (per_channel) return si;
    if (!uniform_scale(si) || !one_zero_point) return std::nullopt;
    return ScaledInt{{si.scale[0]}, {si.zero_point[0]}, {*std::min_element(si.lo.begin(), si.lo.end())},
                     {*std::max_element(si.hi.begin(), si.hi.end())}};
  }

  // A Conv / ConvTranspose bias: one value per output channel (or one for all), as intervals.
  static std::optional<std::vector<Interval>> per_axis_intervals(const Tensor& t, int64_t count) {
    auto v = per_axis(t, 1, 0, count);
    if (!v) return std::nullopt;
    std::vector<Interval> out;
    for (float b : *v) out.push_back({b, b});
    return out;
  }

  // Gemm's C broadcast to [M, N]: per column j, the range of C[:, j] (a scalar, [N], [1, N], [M, 1]
  // or [M, N]).
  static std::optional<std::vector<Interval>> gemm_c_columns(const Tensor& c, int64_t n) {
    if (c.rank() > 2 || c.numel() == 0) return std::nullopt;
    const int64_t cols = c.rank() == 0 ? 1 : c.dim(c.rank() - 1);
    if (cols != 1 && cols != n) return std::nullopt;
    std::vector<Interval> out(static_cast<size_t>(n), Interval{kInf, -kInf});
    const float* p = c.data<float>();
    for (int64_t i = 0; i < c.numel(); ++i)
      for (int64_t j = 0; j < n; ++j)
        if (cols == 1 || i % cols == j) out[static_cast<size_t>(j)] = hull(out[static_cast<size_t>(j)], {p[i], p[i]});
    return out;
  }

  // The exponent E such that every input value, weight, product and bias is an integer multiple of
  // 2^E: inputs n * s with s a power of two, weights on their own grid; nullopt when there is none or
  // it leaves float32's range (E < -149 or E > 103).
  static std::optional<int> sum_grid(const TensorRange& xr, const Tensor& w, const std::optional<std::vector<Interval>>& bias) {
    if (!xr.scaled_int || !uniform_scale(*xr.scaled_int)) return std::nullopt;
    const std::optional<int> ex = power_of_two_exponent(xr.scaled_int->scale[0]);
    if (!ex || *ex < -149) return std::nullopt;  // n * 2^ex itself must be a float32, not a rounded one
    int ew = std::numeric_limits<int>::max();
    const float* wp = w.data<float>();
    for (int64_t i = 0; i < w.numel(); ++i) {
      if (!std::isfinite(wp[i])) return std::nullopt;
      if (wp[i] != 0) ew = std::min(ew, lowest_bit_exponent(wp[i]));
    }
    if (ew == std::numeric_limits<int>::max()) ew = 0;  // all zero
    const int e = *ex + ew;
    if (e < -149 || e > 103) return std::nullopt;
    if (bias)
      for (const Interval& b : *bias)
        if (!is_integral(std::ldexp(b.lo, -e)) || !is_integral(std::ldexp(b.hi, -e))) return std::nullopt;
    return e;
  }

  // Whether a Conv may read padding: explicit non-zero pads or SAME_* auto padding.
  static bool conv_may_pad(const ir::Node& node) {
    const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
    if (auto_pad == "VALID") return false;
    if (auto_pad != "NOTSET") return true;
    const std::vector<int64_t> pads = node.attr_ints("pads");
    return std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  }

  // Every combination of one tap pattern per spatial dim (row-major over the kernel dims, as the
  // weight stores them).
  static std::vector<std::vector<char>> tap_mask_product(const std::vector<std::set<std::vector<char>>>& per_dim) {
    std::vector<std::vector<char>> full{{1}};
    for (const auto& patterns : per_dim) {
      std::vector<std::vector<char>> next;
      for (const auto& prefix : full)
        for (const auto& m : patterns) {
          std::vector<char> combined;
          for (char p : prefix)
            for (char t : m) combined.push_back(static_cast<char>(p && t));
          next.push_back(std::move(combined));
        }
      full = std::move(next);
    }
    return full;
  }

  // The spatial attributes of a Conv / ConvTranspose over a weight of `spatial` kernel dims; nullopt
  // when a list has the wrong length or a value out of range.
  struct WindowAttrs {
    std::vector<int64_t> strides, dilations, pads;
    std::string auto_pad;
  };
  static std::optional<WindowAttrs> window_attrs(const ir::Node& node, size_t spatial) {
    WindowAttrs a{node.attr_ints("strides", std::vector<int64_t>(spatial, 1)),
                  node.attr_ints("dilations", std::vector<int64_t>(spatial, 1)),
                  node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0)), node.attr_string("auto_pad", "NOTSET")};
    if (a.strides.size() != spatial || a.dilations.size() != spatial || a.pads.size() != 2 * spatial) return std::nullopt;
    for (size_t d = 0; d < spatial; ++d)
      if (a.strides[d] <= 0 || a.dilations[d] <= 0 || a.pads[d] < 0 || a.pads[d + spatial] < 0) return std::nullopt;
    return a;
  }

  // The distinct patterns of in-bounds kernel taps over the output positions of a Conv; nullopt when
  // the input's spatial dims or the attributes are not known. SAME_* pads as the kernel computes them
  // (kernels/common/conv_util.cc window_geometry): out = ceil(in / stride), the total the window
  // needs beyond the input split in half, the odd one at the end (UPPER) or the beginning (LOWER).
  std::optional<std::vector<std::vector<char>>> conv_tap_masks(const ir::Node& node, const ir::Value* x,
                                                               const Tensor& w) const {
    const auto dims = g_.dims_of(x);
    const size_t spatial = w.rank() - 2;
    auto a = window_attrs(node, spatial);
    if (!dims || dims->size() != spatial + 2 || !a) return std::nullopt;
    std::vector<std::set<std::vector<char>>> per_dim;
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t size = (*dims)[d + 2], k = w.dim(d + 2), stride = a->strides[d], dil = a->dilations[d];
      if (size <= 0) return std::nullopt;
      int64_t begin = a->pads[d], end = a->pads[d + spatial];
      int64_t outputs = 0;
      if (a->auto_pad == "SAME_UPPER" || a->auto_pad == "SAME_LOWER") {
        outputs = (size + stride - 1) / stride;
        const int64_t total = std::max<int64_t>(0, (outputs - 1) * stride + dil * (k - 1) + 1 - size);
        begin = a->auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      } else {
        if (a->auto_pad == "VALID") begin = end = 0;
        const int64_t span = size + begin + end - dil * (k - 1) - 1;
        if (span < 0) return std::nullopt;
        outputs = span / stride + 1;
      }
      std::set<std::vector<char>> patterns;
      for (int64_t o = 0; o < outputs; ++o) {
        std::vector<char> m(static_cast<size_t>(k));
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = o * stride - begin + j * dil;
          m[static_cast<size_t>(j)] = at >= 0 && at < size;
        }
        patterns.insert(std::move(m));
      }
      per_dim.push_back(std::move(patterns));
    }
    return tap_mask_product(per_dim);
  }

  // The same for ConvTranspose: output position o reads input i through tap j when
  // o = i * stride - pad_begin + j * dilation; the output size and pads as the kernel computes them
  // (kernels/onnx/conv_transpose.cc): full = stride (in - 1) + output_padding + extent, and with
  // output_shape or SAME_* the pads are full - target split in half (floor), else the given pads.
  std::optional<std::vector<std::vector<char>>> conv_transpose_tap_masks(const ir::Node& node, const ir::Value* x,
                                                                         const Tensor& w) const {
    const auto dims = g_.dims_of(x);
    const size_t spatial = w.rank() - 2;
    auto a = window_attrs(node, spatial);
    if (!dims || dims->size() != spatial + 2 || !a) return std::nullopt;
    const std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(spatial, 0));
    std::vector<int64_t> out_shape = node.attr_ints("output_shape");
    if (out_shape.size() == spatial + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (out_pad.size() != spatial || (!out_shape.empty() && out_shape.size() != spatial)) return std::nullopt;
    const bool same = a->auto_pad == "SAME_UPPER" || a->auto_pad == "SAME_LOWER";
    auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
    std::vector<std::set<std::vector<char>>> per_dim;
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t size = (*dims)[d + 2], k = w.dim(d + 2), stride = a->strides[d], dil = a->dilations[d];
      if (size <= 0 || out_pad[d] < 0) return std::nullopt;
      const int64_t full = stride * (size - 1) + out_pad[d] + dil * (k - 1) + 1;
      int64_t begin = a->pads[d], outputs = 0;
      if (!out_shape.empty() || same) {
        outputs = !out_shape.empty() ? out_shape[d] : size * stride;
        const int64_t total = full - outputs;
        begin = a->auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
      } else {
        int64_t end = a->pads[d + spatial];
        if (a->auto_pad == "VALID") begin = end = 0;
        outputs = full - begin - end;
      }
      if (outputs <= 0) return std::nullopt;
      std::set<std::vector<char>> patterns;
      for (int64_t o = 0; o < outputs; ++o) {
        std::vector<char> m(static_cast<size_t>(k));
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = o + begin - j * dil;  // = i * stride
          m[static_cast<size_t>(j)] = at >= 0 && at % stride == 0 && at / stride < size;
        }
        patterns.insert(std::move(m));
      }
      per_dim.push_back(std::move(patterns));
    }
    return tap_mask_product(per_dim);
  }
  // The exact integer accumulator range when x is integer-valued with one scale and the weights are
  // integral: per output channel and tap pattern the extreme sums take each input at the bound the
  // weight's sign selects, so both are attained on the input box (`pad_hull`: padding whose geometry
  // is unknown, a bound only).
  // Returns whether the accumulator was added (last in out_.accumulators).
  bool accumulate(const ir::Node& node, const TensorRange& xr, int64_t C, int64_t K, const float* codes,
                  const std::function<int64_t(int64_t, int64_t)>& index,
                  const std::function<int64_t(int64_t, int64_t)>& in_ch, int64_t area,
                  const std::vector<std::vector<char>>& masks, bool pad_hull) {
    if (!xr.scaled_int || !uniform_scale(*xr.scaled_int)) return false;
    const ScaledInt& si = *xr.scaled_int;
    Accumulator acc;
    acc.node = node.name();
    acc.op_type = node.op_type();
    acc.output = node.output(0)->name();
    acc.reduction = K;
    __int128 all_lo = 0, all_hi = 0;
    for (int64_t c = 0; c < C; ++c) {
      __int128 lo = 0, hi = 0;
      for (size_t m = 0; m < masks.size(); ++m) {
        __int128 mask_lo = 0, mask_hi = 0;
        for (int64_t k = 0; k < K; ++k) {
          if (!masks[m][static_cast<size_t>(k % area)]) continue;
          const int64_t wv = static_cast<int64_t>(codes[index(c, k)]);
          const int64_t ch = in_ch(c, k);
          const bool per = ch >= 0 && si.lo.size() > 1 && static_cast<size_t>(ch) < si.lo.size();
          int64_t nlo = per ? si.lo[static_cast<size_t>(ch)] : *std::min_element(si.lo.begin(), si.lo.end());
          int64_t nhi = per ? si.hi[static_cast<size_t>(ch)] : *std::max_element(si.hi.begin(), si.hi.end());
          if (pad_hull) {
            nlo = std::min<int64_t>(nlo, 0);
            nhi = std::max<int64_t>(nhi, 0);
          }
          const __int128 a = static_cast<__int128>(wv) * nlo, b = static_cast<__int128>(wv) * nhi;
          mask_lo += std::min(a, b);
          mask_hi += std::max(a, b);
        }
        lo = m == 0 ? mask_lo : std::min(lo, mask_lo);
        hi = m == 0 ? mask_hi : std::max(hi, mask_hi);
      }
      acc.lo.push_back(clamp_to_int64(lo));
      acc.hi.push_back(clamp_to_int64(hi));
      all_lo = c == 0 ? lo : std::min(all_lo, lo);
      all_hi = c == 0 ? hi : std::max(all_hi, hi);
    }
    if (C == 0) return false;
    acc.min = clamp_to_int64(all_lo);
    acc.max = clamp_to_int64(all_hi);
    if (acc.min != all_lo || acc.max != all_hi) return false;  // beyond 64 bits: not reported
    acc.signed_bits = signed_bits_for(acc.min, acc.max);
    acc.unsigned_bits = unsigned_bits_for(acc.min, acc.max);
    out_.accumulators.push_back(std::move(acc));
    return true;
  }
};

}  // namespace

// Gamma bound of a float32 sum of n terms in any order (with or without FMA): |fl(sum) - sum| <=
// gamma(n) * sum |term|, gamma(n) = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability, 3.1).
// `abs_sum` is computed in double, whose own rounding (relative n 2^-53) is covered by the extra
// 2^-40 factor; subnormal results add at most 2^-149 per operation.
double float_sum_slack(int64_t n, double abs_sum) {
  const double nu = static_cast<double>(n) * std::ldexp(1.0, -24);
  const double gamma = nu / (1.0 - nu);
  return (gamma + static_cast<double>(n) * std::ldexp(1.0, -52)) * abs_sum * (1.0 + std::ldexp(1.0, -40)) +
         static_cast<double>(n) * std::ldexp(1.0, -149);
}

int signed_bits_for(int64_t lo, int64_t hi) {
  int bits = 1;
  while (bits < 64) {
    const __int128 min = -(static_cast<__int128>(1) << (bits - 1)), max = (static_cast<__int128>(1) << (bits - 1)) - 1;
    if (lo >= min && hi <= max) break;
    ++bits;
  }
  return bits;
}

int unsigned_bits_for(int64_t lo, int64_t hi) {
  if (lo < 0) return 0;
  int bits = 1;
  while (bits < 64 && static_cast<__int128>(hi) > (static_cast<__int128>(1) << bits) - 1) ++bits;
  return bits;
}

Result<RangeAnalysis> analyze_ranges(const ir::Model& model, const RangeOptions& options) {
  QONNX_ASSIGN_OR_RETURN(RangeAnalysis analysis, Analyzer(model, options).run());
  analysis.thresholds = threshold_widths(model, analysis);
  return analysis;
}

std::optional<LinearWeight> linear_weight(const ir::Model& model, const ir::Node& node) {
  if (node.inputs().size() < 2 || !node.input(1)) return std::nullopt;
  return Analyzer(model, RangeOptions{}).linear_weight(node);
}

}  // namespace qonnx::analysis
