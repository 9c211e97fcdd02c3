// avgpool-trunc-to-quantavgpool: FINN's AvgPoolAndTruncToQuantAvgPool. The Brevitas export of
// TruncAvgPool2d, AveragePool(k x k) -> Mul(k*k) -> Trunc(FLOOR, zero point 0), becomes
// [Div(scale)] -> QuantAvgPool2d -> [Mul(out scale)] (a Div/Mul by 1 is left out), only where that is
// bit-identical for every input the finn_datatype annotations allow; anything else is left with a
// warning saying why. The proof, per pattern:
//
// - The pooled input x is an integer grid: x = q * c with integers q in [lo, hi], from an integer
//   annotation on x (c = 1) or on the input of a Mul by a constant scalar c > 0 that produces x.
// - The Trunc's scale s > 0 divides c exactly: m = c / s is an integer >= 1, so every window's
//   T = m * sum(q) is an integer, and so is what the Trunc rounds X/s to if the float error is < 1/2.
// - The error is < 1/2 (a bound valid for any summation order and for a divide or a reciprocal multiply
//   in AveragePool): each float32 step (x = q*c, the n-1 additions, the averaging, the Mul by n, the
//   division by s) contributes one relative 2^-24, so |X/s - T| <= gamma(n + 4) * n * M * m with
//   M = max |q|; when c and s are powers of two only the averaging and the Mul round: gamma(3). The
//   converted form (x/s in float32, the kernel's double sum) has a smaller error and rounds to T too.
//   Scales lie in [2^-60, 2^60] and n * M * m <= 2^22, so nothing overflows or goes subnormal.
// - The Trunc's power-of-two step 2^d (v1: in_bitwidth - out_bitwidth; v2: out_scale / scale) is
//   QuantAvgPool2d's shift: ibits is chosen with max(0, bit_length((2^ibits - 1) k^2) - obits) = d,
//   obits = out_bitwidth (FINN's ibits = in_bitwidth - ceil(log2 k^2) when that works).
// - floor(T / 2^d) stays within out_bitwidth's INTk/UINTk (the output's annotation, qonnx's rule for
//   QuantAvgPool2d), and for v2 within the Trunc's clamp, so neither clamps.
// The QuantAvgPool2d output is annotated INT<obits>/UINT<obits> here (infer-datatypes keeps it).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/pass/rewriter.h"
#include "qonnx/quant/avg_pool.h"
#include "qonnx/quant/params.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

// x = q * scale, q integers in [lo, hi].
struct IntegerGrid {
  double lo = 0, hi = 0;
  float scale = 1.0f;
};

// A constant with one element (any rank up to `max_rank`) as float32.
std::optional<float> single_constant(const ir::Graph& g, const ir::Value* v, int64_t max_rank) {
  if (!v || !is_constant(v) || g.rank_of(v) > max_rank) return std::nullopt;
  auto t = g.initializer_tensor(v);
  if (!t.is_ok() || t->numel() != 1 || (!dtype_is_float(t->dtype()) && !dtype_is_integer(t->dtype()))) return std::nullopt;
  return static_cast<float>(exec::element_as_double(t.value(), 0));
}

bool is_power_of_two(double v) {
  int e = 0;
  return v > 0 && std::frexp(v, &e) == 0.5;
}

// gamma(j) = j u / (1 - j u), u = 2^-24: the relative error bound of j float32 roundings.
double gamma(double j) {
  const double u = std::ldexp(1.0, -24);
  return j * u / (1 - j * u);
}

class AvgPoolTruncToQuantAvgPool : public pass::GraphPass {
 public:
  std::string name() const override { return "avgpool-trunc-to-quantavgpool"; }
  std::string summary() const override {
    return "FINN's AvgPoolAndTruncToQuantAvgPool: AveragePool -> Mul(k*k) -> Trunc(FLOOR) becomes "
           "Div -> QuantAvgPool2d -> Mul where provably bit-identical (finn_datatype annotations)";
  }

  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> pools;
    for (const auto& n : g.nodes())
      if (n->op_type() == "AveragePool" && ir::is_default_domain(n->domain())) pools.push_back(n.get());
    bool changed = false;
    for (ir::Node* pool : pools) {
      ir::Node* mul = only_consumer(pool);
      if (!mul || mul->op_type() != "Mul" || !ir::is_default_domain(mul->domain())) continue;
      ir::Node* trunc = only_consumer(mul);
      if (!trunc || dialect::classify(*trunc) != dialect::Op::kTrunc || trunc->input(0) != mul->output(0)) continue;
      QONNX_ASSIGN_OR_RETURN(bool converted, convert(model, g, pool, mul, trunc, ctx));
      changed |= converted;
    }
    return changed;
  }

 private:
  // The one node reading the node's only output, when that output is not also a graph output.
  static ir::Node* only_consumer(const ir::Node* n) {
    const ir::Value* out = n->output(0);
    if (n->outputs().size() != 1 || !out || out->is_graph_output() || out->uses().size() != 1) return nullptr;
    const ir::Use& use = out->uses()[0];
    return use.input_index >= 0 ? use.node : nullptr;
  }

  bool leave(const ir::Node* n, const std::string& why, pass::PassContext& ctx) {
    ctx.warn(n, "AveragePool -> Mul -> Trunc left in place: " + why);
    ++left_;
    return false;
  }

  // The value's element type: declared, else (a Mul by a constant, before infer-shapes) the constant's.
  static DType element_type(const ir::Graph& g, const ir::Value* v) {
    if (auto t = g.type_of(v); t && t->dtype != DType::kUndefined) return t->dtype;
    const ir::Node* p = v->producer();
    if (!p || p->op_type() != "Mul" || !ir::is_default_domain(p->domain())) return DType::kUndefined;
    for (const ir::Value* in : p->inputs())
      if (const ir::Initializer* init = in ? g.initializer(in) : nullptr) return init->dtype();
    return DType::kUndefined;
  }

  // The values an integer finn_datatype annotation allows (nullopt: none, or not an integer type).
  static std::optional<ir::IntegerRange> integer_range(const ir::Graph& g, const ir::Value* v) {
    const ir::FinnDataType dt = ir::tensor_datatype(g, v);
    return dt.is_integer() ? ir::integer_datatype_range(dt.name) : std::nullopt;
  }

  // The integer grid of x: its own integer annotation, or Mul(t, c) with t annotated integer.
  static std::optional<IntegerGrid> input_grid(const ir::Graph& g, const ir::Value* x) {
    if (auto r = integer_range(g, x)) return IntegerGrid{r->min, r->max, 1.0f};
    const ir::Node* p = x->producer();
    if (!p || p->op_type() != "Mul" || !ir::is_default_domain(p->domain()) || p->inputs().size() != 2) return std::nullopt;
    for (size_t i = 0; i < 2; ++i) {
      auto scale = single_constant(g, p->input(1 - i), 4);  // x is 4-D: no broadcast beyond it
      auto r = integer_range(g, p->input(i));
      if (scale && r) return IntegerGrid{r->min, r->max, *scale};
    }
    return std::nullopt;
  }

  Result<bool> convert(ir::Model& model, ir::Graph& g, ir::Node* pool, ir::Node* mul, ir::Node* trunc,
                       pass::PassContext& ctx) {
    // The AveragePool: 2-D, square, no padding, no dilation, no partial windows.
    ir::Value* x = pool->input(0);
    if (element_type(g, x) != DType::kFloat)
      return leave(pool, "the input is not known to be float32 (run infer-shapes)", ctx);
    const auto dims = g.dims_of(x);  // a 2-D kernel_shape means a 4-D input
    QONNX_ASSIGN_OR_RETURN_CTX(const auto kernel_shape, pool->attr<std::vector<int64_t>>("kernel_shape"), pool->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const auto strides, pool->attr<std::vector<int64_t>>("strides", {1, 1}), pool->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const auto pads, pool->attr<std::vector<int64_t>>("pads", {0, 0, 0, 0}), pool->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const auto dilations, pool->attr<std::vector<int64_t>>("dilations", {1, 1}), pool->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const int64_t ceil_mode, pool->attr<int64_t>("ceil_mode", 0), pool->describe());
    const std::string auto_pad = pool->attr_string("auto_pad", "NOTSET");
    if (kernel_shape.size() != 2 || kernel_shape[0] != kernel_shape[1] || kernel_shape[0] < 1 ||
        kernel_shape[0] > quant::kAvgPoolMaxKernel)
      return leave(pool, fmt::format("the kernel {} is not a 2-D square", fmt::join(kernel_shape, "x")), ctx);
    if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1)
      return leave(pool, fmt::format("the strides {} are not equal", fmt::join(strides, ",")), ctx);
    const int64_t k = kernel_shape[0], stride = strides[0], n = k * k;
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }) || (auto_pad != "NOTSET" && auto_pad != "VALID"))
      return leave(pool, "it pads (QuantAvgPool2d has no padding)", ctx);
    if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; }))
      return leave(pool, "it is dilated", ctx);
    if (ceil_mode != 0) {
      const int64_t h = dims && dims->size() == 4 ? (*dims)[2] : -1, w = dims && dims->size() == 4 ? (*dims)[3] : -1;
      if (h < 0 || w < 0 || (h - k) % stride != 0 || (w - k) % stride != 0)
        return leave(pool, "ceil_mode=1 may make partial windows (averaged over fewer elements)", ctx);
    }
    // The Mul by k*k.
    const int64_t mul_constant = mul->input(0) == pool->output(0) ? 1 : 0;
    const auto factor = single_constant(g, mul->input(static_cast<size_t>(mul_constant)), 4);
    if (!factor || *factor != static_cast<float>(n))
      return leave(mul, fmt::format("the Mul after the AveragePool is not by the constant k*k = {}", n), ctx);

    // The Trunc: FLOOR, constant parameters, zero point 0, a positive single-element scale.
    const int64_t version = ir::canonical_domain(trunc->domain()).empty() ? 1 : model.op_version(trunc->domain());
    const bool v2 = version >= 2;
    QONNX_ASSIGN_OR_RETURN_CTX(const std::string mode, trunc->attr<std::string>("rounding_mode", "FLOOR"), trunc->describe());
    if (quant::parse_rounding_mode(mode) != quant::RoundingMode::kFloor)
      return leave(trunc, fmt::format("rounding_mode is {}, not FLOOR", mode), ctx);
    std::vector<Tensor> params(trunc->inputs().size());
    std::vector<const Tensor*> param_ptrs(trunc->inputs().size(), nullptr);
    for (size_t i = 1; i < trunc->inputs().size(); ++i) {
      const ir::Value* v = trunc->input(i);
      if (!v || !is_constant(v) || g.rank_of(v) > 4) return leave(trunc, fmt::format("input #{} is not a constant of rank <= 4", i), ctx);
      QONNX_ASSIGN_OR_RETURN(params[i], g.initializer_tensor(v));
      if (params[i].numel() != 1) return leave(trunc, fmt::format("input #{} is not a single value (per-tensor only)", i), ctx);
      param_ptrs[i] = &params[i];
    }
    const quant::NodeInputs in(*trunc, param_ptrs);
    auto scale_t = quant::scale_input(in, 1, "scale");
    auto zeropt_t = quant::zero_point_input(in, 2, "zeropt");
    auto out_scale_t = v2 ? quant::scale_input(in, 4, "out_scale") : scale_t;
    auto out_bits = quant::bitwidth_input(in, v2 ? 5 : 4, "out_bitwidth");
    auto in_bits = quant::bitwidth_input(in, 3, "in_bitwidth");
    for (const Status* st : {&scale_t.status(), &zeropt_t.status(), &out_scale_t.status(), &out_bits.status(), &in_bits.status()})
      if (!st->is_ok()) return leave(trunc, st->to_string(), ctx);
    const float s = scale_t->data<float>()[0], out_scale = out_scale_t->data<float>()[0];
    if (zeropt_t->data<float>()[0] != 0.0f) return leave(trunc, "its zero point is not 0", ctx);
    if (s <= 0 || out_scale <= 0) return leave(trunc, "its scales are not positive", ctx);
    int64_t d = 0;
    if (v2) {
      const float step = quant::trunc_v2_step(out_scale, s);
      int e = 0;
      if (!(step >= 1.0f) || !std::isfinite(step) || std::frexp(step, &e) != 0.5f)
        return leave(trunc, "its step 2^rne(log2(out_scale/scale)) is below 1 (QuantAvgPool2d only shifts right)", ctx);
      d = e - 1;
    } else {
      d = static_cast<int64_t>(in_bits.value()) - out_bits.value();
      if (d < 0) return leave(trunc, "in_bitwidth < out_bitwidth (the Trunc multiplies; QuantAvgPool2d only shifts right)", ctx);
    }
    const int64_t obits = out_bits.value();
    if (obits < 2 || obits > 32) return leave(trunc, fmt::format("out_bitwidth {} is outside qonnx's QuantAvgPool2d outputs (2..32)", obits), ctx);
    if (d > 64) return leave(trunc, "its step is beyond 2^64", ctx);

    // The input grid and the error bound.
    const auto grid = input_grid(g, x);
    if (!grid)
      return leave(pool, fmt::format("the input '{}' is not known to be integers times a scale: it needs an integer "
                                     "finn_datatype, or to be a Mul by a constant scalar of such a tensor (run infer-datatypes)",
                                     x->name()),
                   ctx);
    const double c = grid->scale, m = std::round(static_cast<double>(c) / s);
    const double lo_scale = std::ldexp(1.0, -60), hi_scale = std::ldexp(1.0, 60);
    for (double v : {c, static_cast<double>(s), static_cast<double>(out_scale)})
      if (!(v >= lo_scale && v <= hi_scale))
        return leave(trunc, fmt::format("a scale ({}) is outside [2^-60, 2^60]", v), ctx);
    if (m < 1 || m * s != c)
      return leave(trunc, fmt::format("the input scale {} is not an integer multiple of the Trunc's scale {}", c, s), ctx);
    const double largest = std::max(std::fabs(grid->lo), std::fabs(grid->hi));
    const double total = static_cast<double>(n) * largest * m;
    const double bound = (is_power_of_two(c) && is_power_of_two(s) ? gamma(3) : gamma(static_cast<double>(n) + 4)) * total;
    if (total > std::ldexp(1.0, 22) || bound >= 0.5)
      return leave(trunc, fmt::format("the float32 AveragePool path is not provably exact: |window sum| up to {} (error bound {:.3g})", total, bound), ctx);

    // The output range fits out_bitwidth, and (v2) the Trunc's clamp never binds.
    const bool out_signed = grid->lo < 0;
    const double out_lo = std::floor(std::ldexp(static_cast<double>(n) * m * grid->lo, static_cast<int>(-d)));
    const double out_hi = std::floor(std::ldexp(static_cast<double>(n) * m * grid->hi, static_cast<int>(-d)));
    const ir::FinnDataType out_type = ir::integer_datatype(static_cast<int>(obits), out_signed);
    const auto out_range = ir::integer_datatype_range(out_type.name);
    if (!out_range || out_lo < out_range->min || out_hi > out_range->max)
      return leave(trunc, fmt::format("the pooled values [{}, {}] exceed {}", out_lo, out_hi, out_type.name), ctx);
    if (v2) {
      QONNX_ASSIGN_OR_RETURN_CTX(const bool is_signed, trunc->attr<bool>("signed", true), trunc->describe());
      QONNX_ASSIGN_OR_RETURN_CTX(const bool narrow, trunc->attr<bool>("narrow", false), trunc->describe());
      const quant::IntRange clamp = quant::quant_int_range(static_cast<int>(obits), is_signed, narrow);
      if (out_lo < clamp.min || out_hi > clamp.max)
        return leave(trunc, fmt::format("the Trunc's clamp to [{}, {}] binds on pooled values [{}, {}]", clamp.min, clamp.max, out_lo, out_hi), ctx);
    }

    // ibits with QuantAvgPool2d's shift equal to d: FINN's choice when it works, else the smallest.
    quant::AvgPoolParams p;
    p.kernel = k, p.stride = stride, p.obits = obits, p.is_signed = out_signed;
    auto shift_is_d = [&](int64_t ibits) {
      if (ibits < 0 || ibits > quant::kAvgPoolMaxBits) return false;
      p.ibits = ibits;
      return quant::avg_pool_shift(p) == d;
    };
    int64_t ceil_log2_n = 0;
    while ((int64_t{1} << ceil_log2_n) < n) ++ceil_log2_n;
    int64_t ibits = d + obits - ceil_log2_n;
    if (!shift_is_d(ibits)) {
      ibits = 0;
      while (ibits <= quant::kAvgPoolMaxBits && !shift_is_d(ibits)) ++ibits;
      if (ibits > quant::kAvgPoolMaxBits)
        return leave(trunc, fmt::format("no ibits gives QuantAvgPool2d's shift max(0, bit_length((2^ibits-1)*{}) - {}) = {}", n, obits, d), ctx);
    }
    p.ibits = ibits;

    // Rewrite: [Div(x, s)] -> QuantAvgPool2d -> [Mul(out scale)].
    const std::string base = !pool->name().empty() ? pool->name() : pool->output(0)->name();
    const std::string result = trunc->output(0)->name();
    g.remove_value_infos({pool->output(0)->name(), mul->output(0)->name()});
    pass::Rewriter e(g, {pool, mul, trunc}, base);
    ir::Value* pooled_in = x;
    if (s != 1.0f) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* sv, e.constant("scale", Tensor::scalar<float>(DType::kFloat, s)));
      QONNX_ASSIGN_OR_RETURN(pooled_in, e.op("to_integers", "Div", {x, sv}));
    }
    auto attrs = [&](ir::Node& q) {
      q.set_attr("kernel", k);
      q.set_attr("stride", stride);
      q.set_attr("ibits", ibits);
      q.set_attr("obits", obits);
      q.set_attr("signed", static_cast<int64_t>(out_signed ? 1 : 0));
      q.set_attr("data_layout", std::string("NCHW"));
    };
    std::string pooled_name;
    if (out_scale != 1.0f) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* pooled, e.op("pool", dialect::kQuantAvgPool2dOp, {pooled_in}, attrs, dialect::kGeneralDomain));
      QONNX_ASSIGN_OR_RETURN(ir::Value* sv, e.constant("out_scale", Tensor::scalar<float>(DType::kFloat, out_scale)));
      pooled_name = pooled->name();
      QONNX_RETURN_IF_ERROR(e.finish("scaled", "Mul", {pooled, sv}));
    } else {
      QONNX_RETURN_IF_ERROR(e.finish("pool", dialect::kQuantAvgPool2dOp, {pooled_in}, attrs, dialect::kGeneralDomain));
      pooled_name = result;
    }
    g.set_finn_datatype(pooled_name, out_type.name);
    // Shapes for the new tensors when x's are known (lower-custom-ops needs the pooled input's).
    if (dims && dims->size() == 4) {
      if (pooled_in != x) g.add_value_info(pooled_in->name(), DType::kFloat, *dims);
      if (pooled_name != result) {
        Dims out = *dims;
        for (size_t a : {2, 3}) out[a] = out[a] < 0 ? -1 : quant::avg_pool_output_dim(out[a], k, stride);
        g.add_value_info(pooled_name, DType::kFloat, out);
      }
    }
    model.ensure_import(dialect::kGeneralDomain, 1);
    ++converted_;
    return true;
  }

  pass::Statistic converted_{this, "converted", "AveragePool -> Mul -> Trunc patterns now QuantAvgPool2d"};
  pass::Statistic left_{this, "left", "patterns left in place (warned)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_avgpool_trunc_to_quantavgpool() { return std::make_unique<AvgPoolTruncToQuantAvgPool>(); }

}  // namespace qonnx::passes
