// qcdq-to-qonnx: QuantizeLinear -> [Clip] -> DequantizeLinear chains, and DequantizeLinear on integer
// initializers, become QONNX Quant (or BipolarQuant) nodes where the result is exact; every other
// chain is left in place with a diagnostic.
//
// Why the activation form is exact: with integer r = rne(x/s), the chain computes
// clamp(r + zp, lo, hi) - zp = clamp(r, lo - zp, hi - zp), times s. That is Quant(x, s, 0, bits) with
// rounding ROUND whenever [lo - zp, hi - zp] is the integer range of some (bits, signed, narrow): the
// zero point moves into the range instead of into Quant's zeropt (QONNX adds its zero point before
// rounding, QuantizeLinear after; the two differ on rare ties). NaN inputs differ: QuantizeLinear maps
// NaN to 0, Quant keeps NaN. Weights are checked element by element: the new Quant must reproduce the
// dequantized values bit for bit.
#include <cmath>

#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/pass/rewriter.h"
#include "passes/passes.h"
#include "passes/quant_annotation.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/exec/executor.h"
#include "qonnx/ir/finn_datatype.h"

namespace qonnx::passes {
namespace {

// A QONNX integer quantizer's format.
struct QuantFormat {
  int bits = 0;
  bool is_signed = false;
  bool narrow = false;
  bool bipolar = false;
  std::string rounding_mode = "ROUND";
  std::string text() const {
    if (bipolar) return "bipolar";
    return fmt::format("{}-bit {}{}, {}", bits, is_signed ? "signed" : "unsigned", narrow ? " narrow" : "", rounding_mode);
  }
};

bool power_of_two(double v) {
  if (v < 1 || v != std::floor(v)) return false;
  int e = 0;
  return std::frexp(v, &e) == 0.5;
}

int log2_int(double v) { return static_cast<int>(std::lround(std::log2(v))); }

// The Quant format whose integer range is exactly [lo, hi], if any. Signed 1-bit ([-1, 0]) is not one:
// Quant treats it as bipolar.
std::optional<QuantFormat> format_for_range(double lo, double hi) {
  if (lo == 0 && hi >= 1) {
    if (power_of_two(hi + 1) && hi + 1 <= 4294967296.0) return QuantFormat{log2_int(hi + 1), false, false};
    if (power_of_two(hi + 2) && hi + 2 <= 4294967296.0) return QuantFormat{log2_int(hi + 2), false, true};
    return std::nullopt;
  }
  if (lo < 0 && power_of_two(hi + 1) && hi + 1 <= 2147483648.0) {
    const int bits = log2_int(hi + 1) + 1;
    if (bits < 2) return std::nullopt;
    if (lo == -(hi + 1)) return QuantFormat{bits, true, false};
    if (lo == -hi) return QuantFormat{bits, true, true};
  }
  return std::nullopt;
}

struct StorageRange {
  double min, max;
};

std::optional<StorageRange> storage_range(DType t) {
  switch (t) {
    case DType::kInt8: return StorageRange{-128, 127};
    case DType::kUInt8: return StorageRange{0, 255};
    case DType::kInt16: return StorageRange{-32768, 32767};
    case DType::kUInt16: return StorageRange{0, 65535};
    case DType::kInt32: return StorageRange{-2147483648.0, 2147483647.0};
    default: return std::nullopt;
  }
}

// All elements equal (one value for the whole tensor).
std::optional<double> uniform_value(const Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  double v = exec::element_as_double(t, 0);
  for (int64_t i = 1; i < t.numel(); ++i)
    if (exec::element_as_double(t, i) != v) return std::nullopt;
  return v;
}

// Same dtype and the same values (a scalar and a one-element 1-D tensor count as the same).
bool same_values(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.numel() == b.numel() && a.reshaped(b.dims()).identical(b);
}

// The constant behind `v`: an initializer, or a Constant node's value.
std::optional<Tensor> constant_value(const ir::Graph& g, const ir::Value* v) {
  if (!v) return std::nullopt;
  if (is_constant(v)) {
    auto t = g.initializer_tensor(v);
    if (t.is_ok()) return std::move(t).value();
    return std::nullopt;
  }
  const ir::Node* p = v->producer();
  if (p && p->op_type() == "Constant" && ir::is_default_domain(p->domain()) && p->has_attr("value")) {
    auto t = p->attr_tensor("value");
    if (t.is_ok()) return std::move(t).value();
  }
  return std::nullopt;
}

const ir::Node* producer_of(const ir::Value* v, const char* op_type) {
  const ir::Node* p = v ? v->producer() : nullptr;
  return p && p->op_type() == op_type && ir::is_default_domain(p->domain()) ? p : nullptr;
}

// Scale and zero point of a QuantizeLinear / DequantizeLinear; a missing zero point is a zero of
// `code_type` (the spec's default, which qonnx's converter does not handle).
struct LinearParams {
  Tensor scale, zero_point;
  int64_t axis = 1;
};

class QcdqToQonnx : public pass::GraphPass {
 public:
  std::string name() const override { return "qcdq-to-qonnx"; }
  std::string summary() const override {
    return "QuantizeLinear -> [Clip] -> DequantizeLinear chains and DequantizeLinear on integer initializers "
           "become QONNX Quant/BipolarQuant nodes where exact (bit width from the Clip bounds)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> dequantizers;
    for (const auto& n : g.nodes())
      if (n->op_type() == "DequantizeLinear" && ir::is_default_domain(n->domain()) && n->output(0))
        dequantizers.push_back(n.get());
    bool changed_here = false;
    for (ir::Node* dq : dequantizers) {
      QONNX_ASSIGN_OR_RETURN(bool c, convert(model, g, dq, ctx));
      changed_here |= c;
    }
    // lower-quant's exact float forms (other rounding modes, non-zero zero points, 9+ bits, bipolar).
    std::vector<ir::Node*> products;
    for (const auto& n : g.nodes())
      if (n->op_type() == "Mul" && ir::is_default_domain(n->domain()) && n->output(0)) products.push_back(n.get());
    for (ir::Node* mul : products) {
      QONNX_ASSIGN_OR_RETURN(bool c, convert_float_form(g, mul, ctx));
      changed_here |= c;
    }
    return changed_here;
  }
  // The Quant nodes' domain, imported once after every graph.
  Result<bool> finish(ir::Model& model, bool changed, pass::PassContext& ctx) override {
    if (changed) model.ensure_import(dialect::kGeneralDomain, 1);
    return changed;
  }

 private:
  Result<bool> leave(ir::Node* dq, pass::PassContext& ctx, const std::string& why) {
    record_outcome(ctx, *dq, "left", why);
    ctx.warn(dq, why + ": left as QuantizeLinear/DequantizeLinear");
    ++left_;
    return false;
  }

  // Reads a Q or DQ node's parameters; "" or why not.
  static std::string linear_params(const ir::Graph& g, const ir::Node& n, DType code_type, LinearParams* out) {
    auto s = constant_value(g, n.input(1));
    if (!s) return fmt::format("{} scale is not constant", n.op_type());
    if (s->dtype() != DType::kFloat) return fmt::format("{} scale is {}, not float32", n.op_type(), dtype_name(s->dtype()));
    if (n.has_attr("block_size")) return "blocked quantization (block_size) has no Quant form";
    out->scale = *s;
    if (n.input(2)) {
      auto z = constant_value(g, n.input(2));
      if (!z) return fmt::format("{} zero point is not constant", n.op_type());
      out->zero_point = *z;
    } else {
      out->zero_point = Tensor(code_type, s->numel() == 1 ? Dims{} : Dims{s->numel()});
    }
    auto axis = n.attr<int64_t>("axis", 1);
    if (!axis.is_ok()) return axis.status().message();
    out->axis = axis.value();
    return "";
  }

  // The scale as Quant broadcasts it: unchanged per tensor, else rank `rank` with the channels at `axis`.
  static Result<Tensor> broadcast_shaped(const Tensor& t, int64_t axis, int64_t rank) {
    if (t.numel() == 1 && t.rank() <= 1) return t;
    if (rank < 0) return Status(Code::kUnsupported, "per-axis parameters need the input's rank (run infer-shapes)");
    if (axis < 0) axis += rank;
    if (t.rank() != 1 || axis < 0 || axis >= rank) return Status(Code::kUnsupported, "per-axis parameters with an invalid axis");
    Dims dims(static_cast<size_t>(rank), 1);
    dims[static_cast<size_t>(axis)] = t.numel();
    return t.reshaped(dims);
  }

  Result<bool> convert(ir::Model& model, ir::Graph& g, ir::Node* dq, pass::PassContext& ctx) {
    ir::Value* codes = dq->input(0);
    if (!codes) return leave(dq, ctx, "no input");
    if (auto weights = constant_value(g, codes)) return convert_weights(model, g, dq, *weights, ctx);
    const ir::Node* clip = producer_of(codes, "Clip");
    const ir::Node* q = producer_of(clip ? clip->input(0) : codes, "QuantizeLinear");
    if (!q) return leave(dq, ctx, "the input is neither an integer constant nor QuantizeLinear [-> Clip]");
    if (q->has_attr("output_dtype") || q->has_attr("saturate"))
      return leave(dq, ctx, "QuantizeLinear with output_dtype/saturate attributes");
    DType code_type = DType::kUInt8;
    if (q->input(2)) {
      auto z = constant_value(g, q->input(2));
      if (!z) return leave(dq, ctx, "QuantizeLinear zero point is not constant");
      code_type = z->dtype();
    }
    auto range = storage_range(code_type);
    if (!range) return leave(dq, ctx, fmt::format("codes of type {} (int8, uint8, int16, uint16, int32 convert)", dtype_name(code_type)));
    LinearParams qp, dp;
    if (std::string why = linear_params(g, *q, code_type, &qp); !why.empty()) return leave(dq, ctx, why);
    if (std::string why = linear_params(g, *dq, code_type, &dp); !why.empty()) return leave(dq, ctx, why);
    if (!same_values(qp.scale, dp.scale) || !same_values(qp.zero_point, dp.zero_point) ||
        (dp.scale.numel() > 1 && qp.axis != dp.axis))
      return leave(dq, ctx, "QuantizeLinear and DequantizeLinear parameters differ");
    double lo = range->min, hi = range->max;
    if (clip) {
      for (int k : {1, 2}) {
        if (!clip->input(k)) continue;
        auto b = constant_value(g, clip->input(k));
        if (!b || b->numel() != 1) return leave(dq, ctx, "Clip bounds are not constant scalars");
        double v = exec::element_as_double(*b, 0);
        if (k == 1) lo = std::max(lo, v);
        else hi = std::min(hi, v);
      }
    }
    auto zp = uniform_value(dp.zero_point);
    if (!zp) return leave(dq, ctx, "per-channel zero points that differ have no exact Quant form");
    auto format = format_for_range(lo - *zp, hi - *zp);
    if (!format)
      return leave(dq, ctx, fmt::format("the integer range [{}, {}]{} is not the range of any Quant bit width", lo - *zp, hi - *zp,
                                        *zp != 0 ? fmt::format(" (Clip/type range minus zero point {})", *zp) : ""));
    ir::Value* x = q->input(0);
    int64_t rank = -1;
    if (auto t = g.type_of(x); t && t->has_shape) rank = static_cast<int64_t>(t->dims.size());
    if (auto xc = constant_value(g, x)) rank = static_cast<int64_t>(xc->rank());
    auto scale = broadcast_shaped(dp.scale, dp.axis, rank);
    if (!scale.is_ok()) return leave(dq, ctx, scale.status().message());
    std::string detail = fmt::format("Quant ({}) from QuantizeLinear{} -> DequantizeLinear{}", format->text(),
                                     clip ? " -> Clip" : "", *zp != 0 ? fmt::format(", zero point {} moved into the range", *zp) : "");
    record_outcome(ctx, *dq, "converted", detail);
    ++activations_;
    ir::Node* clip_node = const_cast<ir::Node*>(clip);
    ir::Node* q_node = const_cast<ir::Node*>(q);
    QONNX_RETURN_IF_ERROR(emit_quant(g, dq, x, scale.value(), Tensor::scalar<float>(DType::kFloat, 0.0f), *format));
    // The QuantizeLinear and Clip go when nothing else reads them.
    for (ir::Node* n : {clip_node, q_node})
      if (n && n->output(0)->uses().empty() && !n->output(0)->is_graph_output()) g.remove_node(n);
    return true;
  }

  // DequantizeLinear of integer codes: a float initializer with the dequantized values and a Quant
  // that reproduces them exactly (checked here).
  Result<bool> convert_weights(ir::Model& model, ir::Graph& g, ir::Node* dq, const Tensor& codes, pass::PassContext& ctx) {
    auto range = storage_range(codes.dtype());
    if (!range) return leave(dq, ctx, fmt::format("integer codes of type {}", dtype_name(codes.dtype())));
    LinearParams dp;
    if (std::string why = linear_params(g, *dq, codes.dtype(), &dp); !why.empty()) return leave(dq, ctx, why);
    std::vector<const Tensor*> ins = {&codes, &dp.scale, &dp.zero_point};
    auto dequantized = exec::evaluate_node(model, *dq, ins, ctx.registry());
    if (!dequantized.is_ok()) return leave(dq, ctx, "cannot evaluate: " + dequantized.status().message());
    const Tensor& values = dequantized.value()[0];
    // The bit width from the codes' finn_datatype annotation (lower-quant writes INT4, BIPOLAR, ...),
    // else the storage type's.
    QuantFormat format;
    double lo = range->min, hi = range->max;
    const std::string datatype = g.finn_datatype(codes_name(dq));
    if (auto r = ir::integer_datatype_range(datatype)) {
      if (r->excludes_zero) format.bipolar = true;
      else if (r->min >= lo && r->max <= hi) lo = r->min, hi = r->max;
    }
    const FoldedQuantizer recorded = folded_quantizer(g, codes_name(dq));
    if (format.bipolar && !recorded.rounding_mode.empty()) {
      // A 1-bit signed Quant (lower-quant records it; BipolarQuant weights carry no record).
      format = QuantFormat{1, true, recorded.narrow.value_or(false), false, recorded.rounding_mode};
    } else if (!format.bipolar) {
      auto f = format_for_range(lo, hi);
      if (!f) return leave(dq, ctx, fmt::format("the integer range [{}, {}] is not the range of any Quant bit width", lo, hi));
      format = *f;
      // What lower-quant recorded of the folded quantizer (the exactness check below still decides).
      if (recorded.narrow && *recorded.narrow) format.narrow = true;
      if (!recorded.rounding_mode.empty()) format.rounding_mode = recorded.rounding_mode;
    }
    auto scale = broadcast_shaped(dp.scale, dp.axis, static_cast<int64_t>(codes.rank()));
    if (!scale.is_ok()) return leave(dq, ctx, scale.status().message());
    // One zero point for all channels stays a scalar (as qonnx writes it).
    auto uniform_zero_point = uniform_value(dp.zero_point);
    QONNX_ASSIGN_OR_RETURN(const Tensor float_zero_point, exec::cast_tensor(dp.zero_point, DType::kFloat));
    auto zero_point = uniform_zero_point
                          ? Result<Tensor>(Tensor::scalar<float>(DType::kFloat, static_cast<float>(*uniform_zero_point)))
                          : broadcast_shaped(float_zero_point, dp.axis, static_cast<int64_t>(codes.rank()));
    if (!zero_point.is_ok()) return leave(dq, ctx, zero_point.status().message());
    if (format.bipolar && uniform_value(dp.zero_point).value_or(1) != 0) return leave(dq, ctx, "bipolar codes with a non-zero zero point");
    // Exactness: the new quantizer applied to the dequantized values must give them back bit for bit.
    auto checked = check_weights(model, g, dq, values, scale.value(), zero_point.value(), format, ctx);
    if (!checked.is_ok()) return leave(dq, ctx, checked.status().message());
    if (!checked.value()) return leave(dq, ctx, fmt::format("Quant ({}) does not reproduce the dequantized weights exactly", format.text()));
    record_outcome(ctx, *dq, "converted", fmt::format("{} ({}) on the dequantized weights", format.bipolar ? dialect::kBipolarQuantOp : dialect::kQuantOp, format.text()));
    ++weights_;
    pass::Rewriter e(g, dq);
    QONNX_ASSIGN_OR_RETURN(ir::Value* w, e.constant("float", values));
    QONNX_RETURN_IF_ERROR(emit_quant(g, dq, w, scale.value(), zero_point.value(), format, &e));
    return true;
  }

  static std::string codes_name(const ir::Node* dq) { return dq->input(0)->name(); }

  // Runs the candidate quantizer on the values with the kernels and compares bit for bit.
  Result<bool> check_weights(const ir::Model& model, ir::Graph& g, ir::Node* dq, const Tensor& values, const Tensor& scale,
                             const Tensor& zero_point, const QuantFormat& f, pass::PassContext& ctx) {
    // A detached node to evaluate: added, evaluated and removed again.
    const std::string name = g.unique_name(dq->name() + "_exactness_check");
    QONNX_ASSIGN_OR_RETURN(ir::Node* probe, g.insert_node(dq, name, f.bipolar ? dialect::kBipolarQuantOp : dialect::kQuantOp, dialect::kGeneralDomain,
                                                         {}, {name}));
    set_quant_attrs(*probe, f);
    Tensor bits = Tensor::scalar<float>(DType::kFloat, static_cast<float>(f.bits));
    std::vector<const Tensor*> ins = {&values, &scale};
    if (!f.bipolar) ins.insert(ins.end(), {&zero_point, &bits});
    auto out = exec::evaluate_node(model, *probe, ins, ctx.registry());
    g.remove_node(probe);
    if (!out.is_ok()) return std::move(out).status();
    const Tensor& y = out.value()[0];
    if (y.numel() != values.numel() || y.dtype() != DType::kFloat || values.dtype() != DType::kFloat) return false;
    for (int64_t i = 0; i < y.numel(); ++i) {
      float a = y.data<float>()[i], b = values.data<float>()[i];
      if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
    }
    return true;
  }

  static void set_quant_attrs(ir::Node& n, const QuantFormat& f) {
    if (f.bipolar) return;
    n.set_attr("signed", f.is_signed ? 1 : 0);
    n.set_attr("narrow", f.narrow ? 1 : 0);
    n.set_attr("rounding_mode", f.rounding_mode);
  }

  // Replaces `dq` by Quant(x, scale, zero_point, bits) (BipolarQuant(x, scale) for bipolar codes).
  static Status emit_quant(ir::Graph& g, ir::Node* dq, ir::Value* x, const Tensor& scale, const Tensor& zero_point,
                           const QuantFormat& f, pass::Rewriter* emitter = nullptr) {
    std::optional<pass::Rewriter> own;
    if (!emitter) emitter = &own.emplace(g, dq);
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, emitter->constant("scale", scale));
    std::vector<ir::Value*> ins = {x, s};
    if (!f.bipolar) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* z, emitter->constant("zeropt", zero_point));
      QONNX_ASSIGN_OR_RETURN(ir::Value* b, emitter->constant("bitwidth", Tensor::scalar<float>(DType::kFloat, static_cast<float>(f.bits))));
      ins.insert(ins.end(), {z, b});
    }
    return emitter->finish("quant", f.bipolar ? dialect::kBipolarQuantOp : dialect::kQuantOp, ins, [&](ir::Node& n) { set_quant_attrs(n, f); },
                           dialect::kGeneralDomain);
  }

  // Mul(q, s) ending lower-quant's float emulation of Quant: Div(x, s) -> [Add(z)] -> Clip(lo, hi) ->
  // rounding -> [Sub(z)] -> Mul(s), or the bipolar Where(GreaterOrEqual(t, 0), 1, -1) for the rounding
  // step; or of BipolarQuant: Mul(Where(GreaterOrEqual(x, 0), 1, -1), s). The same float operations as
  // the Quant kernel, in the same order: the Quant node computes the same bits.
  Result<bool> convert_float_form(ir::Graph& g, ir::Node* mul, pass::PassContext& ctx) {
    auto s = constant_value(g, mul->input(1));
    if (!s || s->dtype() != DType::kFloat) return false;
    const ir::Value* q = mul->input(0);
    std::optional<Tensor> z;
    if (const ir::Node* sub = producer_of(q, "Sub")) {
      z = constant_value(g, sub->input(1));
      if (!z) return false;
      q = sub->input(0);
    }
    QuantFormat format;
    const ir::Value* t = nullptr;
    if (const ir::Value* compared = sign_code_input(g, q)) {
      const ir::Node* div = producer_of(compared, "Div");
      const ir::Node* add = producer_of(compared, "Add");
      if (add) div = producer_of(add->input(0), "Div");
      if (!div) {
        // BipolarQuant: the sign of x itself.
        if (z) return false;
        format.bipolar = true;
        record_outcome(ctx, *mul, "converted", "BipolarQuant from GreaterOrEqual -> Where -> Mul");
        ++float_forms_;
        QONNX_RETURN_IF_ERROR(emit_quant(g, mul, const_cast<ir::Value*>(compared), *s, Tensor(), format));
        return true;
      }
      format.bits = 1;
      format.is_signed = true;
      t = compared;
    } else {
      auto rounded = rounding_of(q);
      if (!rounded) return false;
      const ir::Node* clip = producer_of(rounded->first, "Clip");
      if (!clip || clip->inputs().size() != 3) return false;
      auto lo = constant_value(g, clip->input(1)), hi = constant_value(g, clip->input(2));
      if (!lo || !hi || lo->numel() != 1 || hi->numel() != 1) return false;
      auto f = format_for_range(exec::element_as_double(*lo, 0), exec::element_as_double(*hi, 0));
      if (!f) return false;
      format = *f;
      format.rounding_mode = rounded->second;
      t = clip->input(0);
    }
    // t = Div(x, s) [+ z], with the scale and zero point the Mul and Sub use.
    const ir::Node* add = producer_of(t, "Add");
    if (add) {
      auto z_add = constant_value(g, add->input(1));
      if (!z || !z_add || !same_values(*z, *z_add)) return false;
      t = add->input(0);
    } else if (z) {
      return false;
    }
    const ir::Node* div = producer_of(t, "Div");
    if (!div) return false;
    auto s_div = constant_value(g, div->input(1));
    if (!s_div || !same_values(*s, *s_div)) return false;
    if (format.bits == 1) {
      // Bipolar Quant: lower-quant records narrow and the mode, which the float form cannot show.
      const FoldedQuantizer recorded = folded_quantizer(g, mul->output(0)->name());
      format.narrow = recorded.narrow.value_or(false);
      if (!recorded.rounding_mode.empty()) format.rounding_mode = recorded.rounding_mode;
    }
    record_outcome(ctx, *mul, "converted", fmt::format("Quant ({}) from its exact float form", format.text()));
    ++float_forms_;
    Tensor zero_point = Tensor::scalar<float>(DType::kFloat, 0.0f);
    if (z) {
      QONNX_ASSIGN_OR_RETURN(zero_point, exec::cast_tensor(*z, DType::kFloat));
    }
    QONNX_RETURN_IF_ERROR(emit_quant(g, mul, div->input(0), *s, zero_point, format));
    return true;
  }

  // The t of Where(GreaterOrEqual(t, 0), 1, -1), else nullptr.
  static const ir::Value* sign_code_input(const ir::Graph& g, const ir::Value* v) {
    const ir::Node* where = producer_of(v, "Where");
    if (!where) return nullptr;
    const ir::Node* ge = producer_of(where->input(0), "GreaterOrEqual");
    auto zero = ge ? constant_value(g, ge->input(1)) : std::nullopt;
    auto plus = constant_value(g, where->input(1)), minus = constant_value(g, where->input(2));
    if (!zero || !plus || !minus || zero->numel() != 1 || plus->numel() != 1 || minus->numel() != 1) return nullptr;
    if (exec::element_as_double(*zero, 0) != 0 || exec::element_as_double(*plus, 0) != 1 || exec::element_as_double(*minus, 0) != -1)
      return nullptr;
    return ge->input(0);
  }

  // lower-quant's rounding forms: (the rounded value, the QONNX mode).
  static std::optional<std::pair<const ir::Value*, std::string>> rounding_of(const ir::Value* v) {
    for (const auto& [op, mode] : {std::pair<const char*, const char*>{"Round", "ROUND"}, {"Ceil", "CEIL"}, {"Floor", "FLOOR"}})
      if (const ir::Node* n = producer_of(v, op)) return std::make_pair(static_cast<const ir::Value*>(n->input(0)), std::string(mode));
    // sign(t) * f(|t|): UP = Ceil(Abs), DOWN = Floor(Abs), HALF_UP = Floor(Abs + 0.5), HALF_DOWN = Ceil(Abs - 0.5).
    const ir::Node* mul = producer_of(v, "Mul");
    if (!mul) return std::nullopt;
    const ir::Node* sign = producer_of(mul->input(0), "Sign");
    if (!sign) return std::nullopt;
    const ir::Value* t = sign->input(0);
    const ir::Node* ceil = producer_of(mul->input(1), "Ceil");
    const ir::Node* floor = producer_of(mul->input(1), "Floor");
    const ir::Node* inner = ceil ? ceil : floor;
    if (!inner) return std::nullopt;
    const ir::Value* arg = inner->input(0);
    if (const ir::Node* abs = producer_of(arg, "Abs"); abs && abs->input(0) == t)
      return std::make_pair(t, std::string(ceil ? "UP" : "DOWN"));
    const ir::Node* shift = producer_of(arg, ceil ? "Sub" : "Add");
    const ir::Node* abs = shift ? producer_of(shift->input(0), "Abs") : nullptr;
    if (!abs || abs->input(0) != t || !shift->input(1) || !shift->input(1)->is_initializer()) return std::nullopt;
    auto half = shift->graph()->initializer_tensor(shift->input(1));
    if (!half.is_ok() || half.value().numel() != 1 || exec::element_as_double(half.value(), 0) != 0.5) return std::nullopt;
    return std::make_pair(t, std::string(ceil ? "HALF_DOWN" : "HALF_UP"));
  }

  pass::Statistic float_forms_{this, "float-forms", "exact float emulations of Quant/BipolarQuant converted back"};
  pass::Statistic activations_{this, "activations", "QuantizeLinear -> [Clip] -> DequantizeLinear chains converted"};
  pass::Statistic weights_{this, "weights", "DequantizeLinear on integer initializers converted"};
  pass::Statistic left_{this, "left", "chains left in place (not exact; see the diagnostics)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_qcdq_to_qonnx() { return std::make_unique<QcdqToQonnx>(); }

}  // namespace qonnx::passes
