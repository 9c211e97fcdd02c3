// lower-custom-ops: exact standard forms for the other QONNX/FINN ops, so a lowered model runs in
// any ONNX runtime:
//  - MultiThreshold: Unsqueeze -> GreaterOrEqual(thresholds) -> Cast -> ReduceSum -> [Mul] -> [Add]
//    (the count is exact in float; scale and bias are applied as the kernel does, multiply then add);
//  - QuantAvgPool2d: Cast to double -> one Slice per window tap (static spatial dims) -> Add chain in
//    the kernel's window order -> Round -> [Mul by 2^-shift -> Floor] -> Cast to float: the kernel's
//    own arithmetic (double sum, half-to-even, exact power-of-two scaling), so bit for bit;
//  - qonnx.custom_op.channels_last Conv / MaxPool / BatchNormalization: Transpose to channels-first,
//    the default-domain op with the same attributes, Transpose back (the kernel does exactly this).
// Needs the default-domain opset >= 13 (Unsqueeze and ReduceSum take axes as inputs).
#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/pass/rewriter.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "passes/layout_perm.h"
#include "passes/passes.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/quant/avg_pool.h"

namespace qonnx::passes {
namespace {

class LowerCustomOps : public pass::GraphPass {
 public:
  std::string name() const override { return "lower-custom-ops"; }
  std::string summary() const override {
    return "Lower MultiThreshold, QuantAvgPool2d and channels_last Conv/MaxPool/BatchNormalization to exact standard ops";
  }

  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    if (model.opset("").value_or(1) < 13)
      return Status(Code::kUnsupported, "lower-custom-ops needs the default-domain opset >= 13: run upgrade-opset first");
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : nodes) {
      const dialect::Op op = dialect::classify(*n);
      bool multithreshold = op == dialect::Op::kMultiThreshold;
      bool avg_pool = op == dialect::Op::kQuantAvgPool2d;
      bool channels_last = op == dialect::Op::kChannelsLastConv || op == dialect::Op::kChannelsLastMaxPool ||
                           op == dialect::Op::kChannelsLastBatchNormalization;
      if ((!multithreshold && !avg_pool && !channels_last) || !n->output(0)) continue;
      Result<bool> lowered = multithreshold ? lower_multithreshold(g, n, ctx)
                             : avg_pool     ? lower_quant_avg_pool(g, n, ctx)
                                            : lower_channels_last(g, n, ctx);
      if (!lowered.is_ok()) return std::move(lowered).status();
      changed |= lowered.value();
    }
    return changed;
  }

 private:
  bool leave(ir::Node* n, const std::string& why, pass::PassContext& ctx) {
    ctx.warn(n, why + ": left in place");
    ++left_;
    return false;
  }

  Result<bool> lower_multithreshold(ir::Graph& g, ir::Node* n, pass::PassContext& ctx) {
    ir::Value* v = n->input(0);
    const ir::Value* thr_value = n->input(1);
    int64_t rank = g.rank_of(v);
    if (rank < 1) return leave(n, "the input's rank is unknown (run infer-shapes)", ctx);
    if (!thr_value || !thr_value->is_initializer()) return leave(n, "thresholds are not constant", ctx);
    auto thr_t = g.initializer_tensor(thr_value);
    if (!thr_t.is_ok()) return std::move(thr_t).status().with_context(n->describe());
    Tensor thresholds = thr_t.value();
    auto v_type = g.type_of(v);
    DType v_dtype = v_type ? v_type->dtype : DType::kUndefined;
    if (thresholds.rank() != 2 || (v_dtype != DType::kFloat && v_dtype != DType::kDouble))
      return leave(n, "needs 2-D thresholds and a float or double input", ctx);
    const std::string layout = n->attr_string("data_layout", "NCHW");
    const bool channels_last = !layout.empty() && layout.back() == 'C';
    // The kernel compares in double; float32 values compare the same in float32.
    DType compare = (v_dtype == DType::kFloat && thresholds.dtype() == DType::kFloat) ? DType::kFloat : DType::kDouble;
    Dims thr_dims = {thresholds.dim(0)};
    if (!channels_last)
      for (int64_t d = 2; d < rank; ++d) thr_dims.push_back(1);
    thr_dims.push_back(thresholds.dim(1));
    QONNX_ASSIGN_OR_RETURN(const Tensor typed_thresholds, exec::cast_tensor(thresholds, compare));
    Tensor thr = typed_thresholds.reshaped(thr_dims);
    QONNX_ASSIGN_OR_RETURN_CTX(const float scale, n->attr<float>("out_scale", 1.0f), n->describe());
    QONNX_ASSIGN_OR_RETURN_CTX(const float bias, n->attr<float>("out_bias", 0.0f), n->describe());
    record_outcome(ctx, *n, "lowered", "GreaterOrEqual/Cast/ReduceSum");
    pass::Rewriter e(g, n);
    ir::Value* x = v;
    if (compare != v_dtype) {
      QONNX_ASSIGN_OR_RETURN(x, e.op("to_double", "Cast", {x}, [](ir::Node& c) { c.set_attr("to", static_cast<int64_t>(DType::kDouble)); }));
    }
    Tensor last_axis(DType::kInt64, {1});
    last_axis.data<int64_t>()[0] = -1;
    QONNX_ASSIGN_OR_RETURN(ir::Value* axes, e.constant("axes", last_axis));
    QONNX_ASSIGN_OR_RETURN(ir::Value* expanded, e.op("unsqueeze", "Unsqueeze", {x, axes}));
    QONNX_ASSIGN_OR_RETURN(ir::Value* thr_v, e.constant("thresholds", thr));
    QONNX_ASSIGN_OR_RETURN(ir::Value* reached, e.op("compare", "GreaterOrEqual", {expanded, thr_v}));
    QONNX_ASSIGN_OR_RETURN(ir::Value* ones, e.op("cast", "Cast", {reached}, [&](ir::Node& c) { c.set_attr("to", static_cast<int64_t>(v_dtype)); }));
    const bool needs_scale = scale != 1.0f, needs_bias = bias != 0.0f;
    std::function<void(ir::Node&)> keepdims = [](ir::Node& r) { r.set_attr("keepdims", 0); };
    ++multithreshold_lowered_;
    if (!needs_scale && !needs_bias) {
      QONNX_RETURN_IF_ERROR(e.finish("count", "ReduceSum", {ones, axes}, keepdims));
      return true;
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* count, e.op("count", "ReduceSum", {ones, axes}, keepdims));
    auto param = [&](float value) { return v_dtype == DType::kFloat ? Tensor::scalar<float>(DType::kFloat, value) : Tensor::scalar<double>(DType::kDouble, value); };
    if (needs_scale) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* s, e.constant("out_scale", param(scale)));
      if (!needs_bias) {
        QONNX_RETURN_IF_ERROR(e.finish("scaled", "Mul", {count, s}));
        return true;
      }
      QONNX_ASSIGN_OR_RETURN(count, e.op("scaled", "Mul", {count, s}));
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* b, e.constant("out_bias", param(bias)));
    QONNX_RETURN_IF_ERROR(e.finish("biased", "Add", {count, b}));
    return true;
  }

  Result<bool> lower_quant_avg_pool(ir::Graph& g, ir::Node* n, pass::PassContext& ctx) {
    QONNX_ASSIGN_OR_RETURN_CTX(const quant::AvgPoolParams p, quant::read_avg_pool_params(*n), n->describe());
    ir::Value* x = n->input(0);
    const auto dims = g.dims_of(x);
    const auto type = g.type_of(x);
    if (!dims || dims->size() != 4) return leave(n, "the input's shape is unknown or not 4-D (run infer-shapes)", ctx);
    if (!type || type->dtype != DType::kFloat) return leave(n, "the input is not known to be float", ctx);
    const int64_t h_axis = p.channels_last ? 1 : 2, w_axis = h_axis + 1;
    const int64_t oh = quant::avg_pool_output_dim((*dims)[h_axis], p.kernel, p.stride);
    const int64_t ow = quant::avg_pool_output_dim((*dims)[w_axis], p.kernel, p.stride);
    if ((*dims)[h_axis] < 0 || (*dims)[w_axis] < 0) return leave(n, "the spatial dims are not static (the Slices need them)", ctx);
    if (oh < 0 || ow < 0)
      return Status(Code::kInvalidModel, fmt::format("input of shape {} is smaller than the {}x{} kernel", dims_to_string(*dims),
                                                     p.kernel, p.kernel))
          .with_context(n->describe());
    const int64_t shift = quant::avg_pool_shift(p);
    pass::Rewriter e(g, n);
    auto int64_pair = [](int64_t a, int64_t b) {
      Tensor t(DType::kInt64, {2});
      t.data<int64_t>()[0] = a;
      t.data<int64_t>()[1] = b;
      return t;
    };
    auto cast_to = [](DType to) { return [to](ir::Node& c) { c.set_attr("to", static_cast<int64_t>(to)); }; };
    QONNX_ASSIGN_OR_RETURN(ir::Value* xd, e.op("to_double", "Cast", {x}, cast_to(DType::kDouble)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* axes, e.constant("axes", int64_pair(h_axis, w_axis)));
    QONNX_ASSIGN_OR_RETURN(ir::Value* steps, e.constant("steps", int64_pair(p.stride, p.stride)));
    ir::Value* sum = nullptr;
    for (int64_t dy = 0; dy < p.kernel; ++dy)
      for (int64_t dx = 0; dx < p.kernel; ++dx) {
        const std::string tap = fmt::format("tap_{}_{}", dy, dx);
        QONNX_ASSIGN_OR_RETURN(ir::Value* starts, e.constant(tap + "_starts", int64_pair(dy, dx)));
        QONNX_ASSIGN_OR_RETURN(ir::Value* ends, e.constant(tap + "_ends", int64_pair(dy + p.stride * (oh - 1) + 1, dx + p.stride * (ow - 1) + 1)));
        QONNX_ASSIGN_OR_RETURN(ir::Value* window, e.op(tap, "Slice", {xd, starts, ends, axes, steps}));
        if (sum) {
          QONNX_ASSIGN_OR_RETURN(sum, e.op(tap + "_sum", "Add", {sum, window}));
        } else {
          sum = window;
        }
      }
    QONNX_ASSIGN_OR_RETURN(ir::Value* pooled, e.op("round", "Round", {sum}));
    if (shift > 0) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* step, e.constant("inverse_step", Tensor::scalar<double>(DType::kDouble, std::ldexp(1.0, static_cast<int>(-shift)))));
      QONNX_ASSIGN_OR_RETURN(ir::Value* scaled, e.op("shifted", "Mul", {pooled, step}));
      QONNX_ASSIGN_OR_RETURN(pooled, e.op("floor", "Floor", {scaled}));
    }
    QONNX_RETURN_IF_ERROR(e.finish("to_float", "Cast", {pooled}, cast_to(DType::kFloat)));
    ++quant_avg_pool_lowered_;
    return true;
  }

  Result<bool> lower_channels_last(ir::Graph& g, ir::Node* n, pass::PassContext& ctx) {
    int64_t rank = g.rank_of(n->input(0));
    if (rank < 3 && n->op_type() != "BatchNormalization") return leave(n, "the input's rank is unknown (run infer-shapes)", ctx);
    if (rank < 2) return leave(n, "the input's rank is unknown (run infer-shapes)", ctx);
    if (n->outputs().size() != 1) return leave(n, "only single-output channels_last ops are lowered", ctx);
    const std::string op = n->op_type();
    std::vector<ir::Value*> inputs = n->inputs();
    record_outcome(ctx, *n, "lowered", fmt::format("Transpose -> {} -> Transpose", op));
    pass::Rewriter e(g, n);
    auto perm_attr = [](std::vector<int64_t> perm) {
      return [perm](ir::Node& t) { t.set_attr("perm", perm); };
    };
    std::vector<ir::Value*> ins = inputs;
    QONNX_ASSIGN_OR_RETURN(ins[0], e.op("to_channels_first", "Transpose", {inputs[0]}, perm_attr(to_channels_first_perm(rank))));
    if (op == "Conv") {
      int64_t w_rank = g.rank_of(inputs[1]);
      if (w_rank < 3) return Status(Code::kInvalidModel, "channels_last Conv weights must have rank >= 3");
      QONNX_ASSIGN_OR_RETURN(ins[1], e.op("weights_channels_first", "Transpose", {inputs[1]}, perm_attr(to_channels_first_perm(w_rank))));
    }
    // The channels-first op takes the same attributes.
    QONNX_ASSIGN_OR_RETURN(ir::Value* y, e.op(fmt::format("{}_channels_first", op), op, ins,
                                              [&](ir::Node& node) { node.copy_attributes_from(*n); }));
    QONNX_RETURN_IF_ERROR(e.finish("to_channels_last", "Transpose", {y}, perm_attr(to_channels_last_perm(rank))));
    ++channels_last_lowered_;
    return true;
  }
  pass::Statistic left_{this, "left", "nodes left in place (reported)"};
  pass::Statistic multithreshold_lowered_{this, "multithreshold-lowered", "MultiThreshold nodes lowered"};
  pass::Statistic quant_avg_pool_lowered_{this, "quant-avg-pool-lowered", "QuantAvgPool2d nodes lowered"};
  pass::Statistic channels_last_lowered_{this, "channels-last-lowered", "channels_last nodes lowered"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_lower_custom_ops() { return std::make_unique<LowerCustomOps>(); }

}  // namespace qonnx::passes
