// quant-act-to-multithreshold: FINN's ConvertQuantActToMultiThreshold, exact. A Quant or BipolarQuant on
// an activation becomes MultiThreshold(x, thresholds) counting levels (out_scale = the level step,
// out_bias = the lowest level, minus a per-tensor integer zero point), then Sub(zero point) where the zero
// point could not go into out_bias, then Mul(scale): the Quant's own float32 steps (q - z) * s on the same
// integer code q. The thresholds are the smallest float32 reaching each level, found by bisection and
// proven (quant/thresholds.h), so the count equals the Quant's code for every rounding mode and every
// float32 input except NaN (Quant keeps NaN, a count cannot; bipolar codes are exact on NaN too).
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "passes/param_layout.h"
#include "passes/passes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/pass/rewriter.h"
#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/quant/params.h"
#include "qonnx/quant/thresholds.h"

namespace qonnx::passes {
namespace {

// MultiThreshold's data_layout for a channel axis: channels first (the default) or last.
std::string data_layout(int64_t axis, int64_t rank) {
  if (axis == 1 || rank == 2) return "";
  static const char* const kLast[] = {"", "", "NC", "NWC", "NHWC", "NDHWC"};
  return rank < 6 ? kLast[rank] : std::string(static_cast<size_t>(rank - 1), 'X').insert(0, "N").append("C");
}

class QuantActToMultiThreshold : public pass::GraphPass {
 public:
  std::string name() const override { return "quant-act-to-multithreshold"; }
  std::string summary() const override {
    return "Quant/BipolarQuant on activations -> MultiThreshold with proven float32 thresholds [-> Sub zero point] "
           "[-> Mul scale] (FINN's ConvertQuantActToMultiThreshold), exact for every rounding mode and zero point";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> quantizers, minifloat;
    for (const auto& n : g.nodes()) {
      const dialect::Op op = dialect::classify(*n);
      if (!n->output(0) || !n->input(0) || is_constant(n->input(0))) continue;
      if (op == dialect::Op::kQuant || op == dialect::Op::kBipolarQuant) quantizers.push_back(n.get());
      if (op == dialect::Op::kFloatQuant) minifloat.push_back(n.get());
    }
    for (ir::Node* n : minifloat)
      QONNX_RETURN_IF_ERROR(leave(n, "minifloat levels are not evenly spaced: no MultiThreshold form (count x scale + bias)", ctx).status());
    bool changed = false;
    for (ir::Node* n : quantizers) {
      QONNX_ASSIGN_OR_RETURN(bool converted, convert(g, n, ctx));
      changed |= converted;
    }
    if (changed) model.ensure_import(dialect::kGeneralDomain, 1);
    return changed;
  }

 private:
  Result<bool> leave(ir::Node* n, const std::string& why, pass::PassContext& ctx) {
    record_outcome(ctx, *n, "left", why);
    if (*strict_) return Status(Code::kUnsupported, why + " (a quantizer MultiThreshold cannot reproduce)").with_context(n->describe());
    ctx.warn(n, why + ": left a quantizer");
    ++left_;
    return false;
  }

  Result<bool> convert(ir::Graph& g, ir::Node* n, pass::PassContext& ctx) {
    const bool bipolar_op = dialect::classify(*n) == dialect::Op::kBipolarQuant;
    std::vector<Tensor> held(n->inputs().size());
    std::vector<const Tensor*> inputs(n->inputs().size(), nullptr);
    for (size_t i = 1; i < n->inputs().size(); ++i) {
      if (!n->input(i)) continue;
      if (!is_constant(n->input(i))) return leave(n, fmt::format("input #{} is not a constant", i), ctx);
      QONNX_ASSIGN_OR_RETURN_CTX(held[i], g.initializer_tensor(n->input(i)), n->describe());
      inputs[i] = &held[i];
    }
    const quant::NodeInputs in(*n, inputs);
    auto read = bipolar_op ? quant::read_bipolar_params(in) : quant::read_quant_params(in);
    if (!read.is_ok()) return std::move(read).status().with_context(n->describe());
    const quant::QuantParams& p = read.value();
    if (!p.bipolar() && p.bits > *max_bits_)
      return leave(n, fmt::format("bit width {} above max-bits {} (2^{} - 1 thresholds per channel)", p.bits, *max_bits_, p.bits), ctx);
    // BipolarQuant compares x itself with 0; Quant divides by the scale first.
    for (int64_t i = 0; i < p.scale.numel() && !bipolar_op; ++i)
      if (!(p.scale.data<float>()[i] > 0.0f))
        return leave(n, "a scale is negative: the code then falls as x grows, which thresholds cannot count", ctx);

    ir::Value* x = n->input(0);
    const int64_t rank = g.rank_of(x);
    if (rank < 2) return leave(n, rank < 0 ? "the input's rank is unknown (run infer-shapes)" : "MultiThreshold needs a batch and a channel axis", ctx);
    const auto x_type = g.type_of(x);
    if (!x_type || x_type->dtype != DType::kFloat)
      return leave(n, "the input is not known to be float32 (MultiThreshold would compare another type than the Quant)", ctx);
    if (p.scale.rank() > static_cast<size_t>(rank) || p.zeropt.rank() > static_cast<size_t>(rank))
      return leave(n, "a parameter has more axes than the input (the Quant broadcasts its output up)", ctx);
    const Layout scale_layout = layout_of(p.scale, rank), zero_layout = layout_of(p.zeropt, rank);
    Layout layout{true, false, 0, 1};
    for (const Layout& l : {scale_layout, zero_layout}) {
      if (l.per_tensor) continue;
      if (!l.one_axis || (layout.one_axis && (l.axis != layout.axis || l.channels != layout.channels)))
        return leave(n, "the scale or zero point varies along more than one axis", ctx);
      layout = l;
    }
    if (layout.one_axis && layout.axis != 1 && layout.axis != rank - 1)
      return leave(n, fmt::format("the parameters vary along axis {}: MultiThreshold's channels are axis 1 or the last", layout.axis), ctx);

    ir::Node* relu = nullptr;
    if (*absorb_relu_ && x->producer() && x->producer()->op_type() == "Relu" && ir::is_default_domain(x->producer()->domain()) &&
        x->uses().size() == 1 && !x->is_graph_output()) {
      relu = x->producer();
      const auto relu_in = g.type_of(relu->input(0));
      if (!relu_in || relu_in->dtype != DType::kFloat) relu = nullptr;
    }

    const int64_t channels = layout.channels;
    const Tensor scales = flatten_param(p.scale, layout, channels), zeros = flatten_param(p.zeropt, layout, channels);
    const quant::IntRange range = quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    std::vector<float> levels;
    if (!p.bipolar() && range.max <= range.min) return leave(n, "the quantizer has a single level", ctx);
    if (p.bipolar()) {
      levels = {-1.0f, 1.0f};
    } else {
      for (float level = range.min; level <= range.max; level += 1) levels.push_back(level);
    }
    std::vector<std::vector<float>> rows;
    for (int64_t c = 0; c < channels; ++c) {
      const float s = scales.data<float>()[c], z = zeros.data<float>()[c];
      std::function<float(float)> code = [&, s, z](float v) {
        return bipolar_op ? quant::bipolar_code(v) : quant::quant_code(v, s, z, range, p);
      };
      if (relu) code = [inner = code](float v) { return inner(v > 0.0f ? v : 0.0f); };
      auto row = quant::monotone_thresholds(code, levels);
      if (!row.is_ok()) return std::move(row).status().with_context(n->describe() + ": channel " + std::to_string(c));
      rows.push_back(std::move(row).value());
    }
    // Levels every channel reaches from -inf on (after an absorbed Relu) need no threshold; bipolar
    // codes keep theirs, whose count of 0 is what NaN gives.
    size_t reached = 0;
    if (!p.bipolar()) {
      reached = levels.size() - 2;
      for (const auto& row : rows)
        reached = std::min<size_t>(reached, std::find_if(row.begin(), row.end(), [](float t) { return t != -INFINITY; }) - row.begin());
    }
    const int64_t count = static_cast<int64_t>(levels.size() - 1 - reached);
    Tensor thresholds(DType::kFloat, {channels, count});
    for (int64_t c = 0; c < channels; ++c)
      std::copy(rows[c].begin() + static_cast<long>(reached), rows[c].end(), thresholds.data<float>() + c * count);

    const float lowest = levels[reached], step = p.bipolar() ? 2.0f : 1.0f;
    const bool zero_in_bias = zero_layout.per_tensor && all_integral(p.zeropt);
    const float z0 = p.zeropt.data<float>()[0];
    const float out_bias = zero_in_bias ? lowest - z0 : lowest;
    const double top = out_bias + step * static_cast<double>(count);
    const std::string out_dtype = p.bipolar() && out_bias == -1.0f ? "BIPOLAR" : ir::smallest_integer_datatype(out_bias, top).name;
    const bool needs_sub = !zero_in_bias, needs_mul = !all_equal_to(p.scale, 1.0f);

    // Recorded first: the rewrite removes the node.
    const bool nan_exact = p.bipolar();
    record_outcome(ctx, *n, "converted",
                   fmt::format("MultiThreshold, {} threshold(s) x {} channel(s), out_dtype {}{}{}{}; exact on every float32{}",
                               count, channels, out_dtype, relu ? ", Relu absorbed" : "", needs_sub ? ", Sub zero point" : "",
                               needs_mul ? ", Mul scale" : "",
                               nan_exact ? "" : fmt::format(" but NaN (the Quant gives NaN, MultiThreshold level {})", lowest)));
    pass::Rewriter e(g, n);
    QONNX_ASSIGN_OR_RETURN(ir::Value* thr, e.constant("thresholds", thresholds));
    const std::string layout_name = data_layout(layout.one_axis ? layout.axis : 1, rank);
    auto mt_attrs = [&](ir::Node& mt) {
      mt.set_attr("out_dtype", out_dtype);
      if (step != 1.0f) mt.set_attr("out_scale", step);
      if (out_bias != 0.0f) mt.set_attr("out_bias", out_bias);
      if (!layout_name.empty()) mt.set_attr("data_layout", layout_name);
    };
    ir::Value* source = relu ? relu->input(0) : x;
    if (!needs_sub && !needs_mul) {
      QONNX_RETURN_IF_ERROR(e.finish("multithreshold", dialect::kMultiThresholdOp, {source, thr}, mt_attrs, dialect::kGeneralDomain));
    } else {
      QONNX_ASSIGN_OR_RETURN(ir::Value* y, e.op("multithreshold", dialect::kMultiThresholdOp, {source, thr}, mt_attrs, dialect::kGeneralDomain));
      g.set_finn_datatype(y->name(), out_dtype);
      if (needs_sub) {
        QONNX_ASSIGN_OR_RETURN(ir::Value* z, e.constant("zeropt", p.zeropt));
        if (needs_mul) {
          QONNX_ASSIGN_OR_RETURN(y, e.op("sub_zeropt", "Sub", {y, z}));
        } else {
          QONNX_RETURN_IF_ERROR(e.finish("sub_zeropt", "Sub", {y, z}));
        }
      }
      if (needs_mul) {
        QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("scale", p.scale));
        QONNX_RETURN_IF_ERROR(e.finish("mul_scale", "Mul", {y, s}));
      }
    }
    if (relu) {
      g.remove_node(relu);
      ++relu_absorbed_;
    }
    ++converted_;
    return true;
  }

  pass::Option<int64_t> max_bits_{this, "max-bits", 8, "quantizers of more bits stay Quant (2^bits - 1 thresholds per channel)",
                                  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
  pass::Option<bool> strict_{this, "strict", false, "1: a quantizer that cannot be converted is an error"};
  pass::Option<bool> absorb_relu_{this, "absorb-relu", true, "0: keep a Relu in front of the MultiThreshold"};
  pass::Statistic converted_{this, "converted", "quantizers converted to MultiThreshold"};
  pass::Statistic relu_absorbed_{this, "relu-absorbed", "Relu nodes absorbed into the thresholds"};
  pass::Statistic left_{this, "left", "quantizers left in place (reported)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_quant_act_to_multithreshold() { return std::make_unique<QuantActToMultiThreshold>(); }

}  // namespace qonnx::passes
