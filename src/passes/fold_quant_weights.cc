// fold-quant-weights: Quant / BipolarQuant / Trunc whose inputs are all initializers become
// precomputed tensors. mode=float stores the dequantized float weights; mode=int stores the integer
// codes (annotated with their finn_datatype) followed by Sub(zero point) and Mul(scale), which
// recompute exactly the float weights: Quant's output is (q - z) * s in float32.
// mode=finn is FINN's FoldQuantWeights: the weight becomes the integers q - z (exact in float32, typed
// with the smallest INTk/UINTk/BIPOLAR/BINARY of their range) and the scale moves behind the weight's
// single consumer, where that is algebraically right for the consumer and the scale's shape (see
// scale_move); anything else folds to float weights as mode=float, with the reason in its outcome.
// Moving a scale re-associates float arithmetic: exact for powers of two (barring overflow and
// subnormals), a rounding difference otherwise (counted in scales-moved-not-power-of-two).
#include <cmath>
#include <algorithm>
#include <cfloat>
#include <cstring>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/quant/params.h"
#include "qonnx/exec/broadcast.h"
#include "qonnx/exec/executor.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/kernels/quant.h"
#include "ir/spill_store.h"
#include "passes/param_layout.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

std::string integer_datatype(const quant::QuantParams& p) {
  if (p.bits == 1) return p.is_signed ? "BIPOLAR" : "BINARY";
  return fmt::format("{}INT{}", p.is_signed ? "" : "U", p.bits);
}

// Integer codes and parameters of a Quant or BipolarQuant node with constant inputs.
Result<std::pair<Tensor, quant::QuantParams>> integer_codes(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  const quant::NodeInputs in(node, inputs);
  QONNX_ASSIGN_OR_RETURN(Tensor x, quant::float_input(in, 0, "X"));
  if (dialect::classify(node) == dialect::Op::kBipolarQuant) {
    QONNX_ASSIGN_OR_RETURN(quant::QuantParams p, quant::read_bipolar_params(in));
    QONNX_ASSIGN_OR_RETURN(Tensor codes, quant::bipolar_codes(in, x, p.scale));
    return std::make_pair(std::move(codes), std::move(p));
  }
  QONNX_ASSIGN_OR_RETURN(quant::QuantParams p, quant::read_quant_params(in));
  QONNX_ASSIGN_OR_RETURN(Tensor codes, kernels::quant_codes(in, x, p));
  return std::make_pair(std::move(codes), std::move(p));
}


// +-2^k for a normal k: multiplying or dividing by it rounds nothing (barring overflow and subnormals).
bool all_powers_of_two(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = std::fabs(t.data<float>()[i]);
    int e = 0;
    if (!(v >= FLT_MIN) || std::frexp(v, &e) != 0.5f) return false;
  }
  return true;
}

// `t` (float32) as rank `rank` (leading 1s added), with every axis it is constant along cut to size 1:
// the axes a scale really varies along.
Tensor collapse_constant_axes(const Tensor& t, size_t rank) {
  Dims dims(rank - t.rank(), 1);
  dims.insert(dims.end(), t.dims().begin(), t.dims().end());
  Tensor s = t.reshaped(dims);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t n = s.dim(a);
    if (n <= 1) continue;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= s.dim(d);
    for (size_t d = a + 1; d < rank; ++d) inner *= s.dim(d);
    const float* v = s.data<float>();
    bool constant = true;
    for (int64_t o = 0; o < outer && constant; ++o)
      for (int64_t k = 1; k < n && constant; ++k)
        for (int64_t i = 0; i < inner && constant; ++i) constant = v[(o * n + k) * inner + i] == v[o * n * inner + i];
    if (!constant) continue;
    Dims cut = s.dims();
    cut[a] = 1;
    Tensor c(DType::kFloat, cut);
    for (int64_t o = 0; o < outer; ++o)
      std::copy(v + o * n * inner, v + o * n * inner + inner, c.data<float>() + o * inner);
    s = std::move(c);
  }
  return s;
}

std::vector<size_t> varying_axes(const Tensor& collapsed) {
  std::vector<size_t> axes;
  for (size_t a = 0; a < collapsed.rank(); ++a)
    if (collapsed.dim(a) > 1) axes.push_back(a);
  return axes;
}

bool only_along(const std::vector<size_t>& varying, const std::set<size_t>& allowed) {
  for (size_t a : varying)
    if (!allowed.count(a)) return false;
  return true;
}

// Where a weight's scale goes in FINN mode: the consumer reads the integers instead, `other_input` (for
// Add/Sub) is divided by the scale in front of it, and the consumer's output is multiplied (or divided)
// by the scale shaped `dims` behind it.
struct ScaleMove {
  ir::Node* consumer = nullptr;
  int weight_input = 0;
  int other_input = -1;
  bool divide_behind = false;
  bool reassociates = true;  // false for Gather: the same products, selected
  Dims dims;
};

// The move for a weight with scale `collapsed` (rank of the weight, constant axes cut to 1), or why
// there is none.
std::variant<ScaleMove, std::string> scale_move(const ir::Graph& g, const ir::Value* weight, const Tensor& collapsed) {
  if (weight->is_graph_output()) return std::string("the weight is a graph output");
  if (weight->uses().size() != 1) return fmt::format("the weight has {} uses, not one", weight->uses().size());
  const ir::Use use = weight->uses()[0];
  if (use.input_index == ir::kImplicitInput) return std::string("the weight is read inside a subgraph");
  ScaleMove m;
  m.consumer = use.node;
  m.weight_input = use.input_index;
  const ir::Node& c = *use.node;
  const std::string& op = c.op_type();
  const size_t rank = collapsed.rank();
  const std::vector<size_t> varying = varying_axes(collapsed);
  const bool per_tensor = varying.empty();
  const std::string where = fmt::format("{} input #{}", op, m.weight_input);
  auto refuse = [&](const std::string& why) { return fmt::format("{}: {}", where, why); };
  auto scale_along = [&](size_t axis) {  // [1, n, 1, ...] of the consumer's output rank = the weight's rank
    Dims d(rank, 1);
    d[1] = collapsed.dim(axis);
    return d;
  };
  if (!ir::is_default_domain(c.domain()) || !c.output(0)) return refuse("not an op the scale can move behind");
  if (op == "Conv" || op == "ConvTranspose") {
    // The output channel is W's axis 0 for Conv, axis 1 (times the group) for ConvTranspose.
    if (m.weight_input != 1) return refuse("the weight is not W");
    if (c.input(2)) return refuse("a bias would be scaled too (run extract-conv-bias first)");
    const size_t channel_axis = op == "Conv" ? 0 : 1;
    if (!only_along(varying, {channel_axis}))
      return refuse(fmt::format("the scale varies along W's axes {}, not the output channel alone", varying));
    if (!per_tensor && op == "ConvTranspose") {
      auto group = c.attr<int64_t>("group", 1);
      if (!group.is_ok() || group.value() != 1) return refuse("a per-channel scale with group != 1");
    }
    if (!per_tensor) m.dims = scale_along(channel_axis);
  } else if (op == "MatMul") {
    // A weight (..., K, N) as B scales the output's columns; one (..., M, K) as A its rows.
    const int64_t other_rank = g.rank_of(c.input(1 - m.weight_input));
    if (!per_tensor) {
      if (rank < 2) return refuse("a 1-D weight varies along the contracted axis");
      const size_t free_axis = m.weight_input == 1 ? rank - 1 : rank - 2;
      if (!only_along(varying, {free_axis}))
        return refuse(fmt::format("the scale varies along axes {} of the weight, not axis {} alone", varying, free_axis));
      if (m.weight_input == 1) m.dims = {collapsed.dim(free_axis)};
      else if (other_rank < 0) return refuse("B's rank is unknown");
      else if (other_rank == 1) m.dims = {collapsed.dim(free_axis)};  // the output has no N axis
      else m.dims = {collapsed.dim(free_axis), 1};
    }
  } else if (op == "Mul" || op == "Div" || op == "Add" || op == "Sub") {
    m.dims = collapsed.dims();  // the weight's broadcast axes are the output's
    m.divide_behind = op == "Div" && m.weight_input == 1;
    if (op == "Add" || op == "Sub") m.other_input = 1 - m.weight_input;
  } else if (op == "Gather") {
    if (m.weight_input != 0) return refuse("the weight is not the data");
    auto axis_attr = c.attr<int64_t>("axis", 0);
    const int64_t indices_rank = g.rank_of(c.input(1));
    if (!axis_attr.is_ok()) return refuse(axis_attr.status().message());
    const int64_t axis = axis_attr.value() < 0 ? axis_attr.value() + static_cast<int64_t>(rank) : axis_attr.value();
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return refuse("axis out of range");
    if (collapsed.dim(static_cast<size_t>(axis)) != 1) return refuse("the scale varies along the gathered axis");
    if (indices_rank < 0) return refuse("the indices' rank is unknown");
    // The output is data[:axis] + indices + data[axis + 1:].
    m.dims.assign(collapsed.dims().begin(), collapsed.dims().begin() + axis);
    m.dims.insert(m.dims.end(), static_cast<size_t>(indices_rank), 1);
    m.dims.insert(m.dims.end(), collapsed.dims().begin() + axis + 1, collapsed.dims().end());
    m.reassociates = false;
  } else {
    return refuse("not an op the scale can move behind");
  }
  if (per_tensor) m.dims = {};
  return m;
}

class FoldQuantWeights : public pass::GraphPass {
 public:
  std::string name() const override { return "fold-quant-weights"; }
  std::string summary() const override {
    return "Precompute Quant/BipolarQuant/Trunc on initializers (mode=float: float weights; "
           "mode=int: integer weights with their finn_datatype, then Sub(zeropt) and Mul(scale); "
           "mode=finn: integer weights, the scale moved behind the consumer as FINN does, where that is right; "
           "a scale that is not a power of two re-associates float arithmetic)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    return fold(model, g, ctx);
  }

 private:
  Result<bool> fold(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) {
    std::vector<ir::Node*> candidates;
    for (const auto& n : g.nodes())
      if (dialect::is_integer_quantizer(*n) && n->output(0)) candidates.push_back(n.get());
    bool changed = false;
    for (ir::Node* node : candidates) {
      const bool trunc = dialect::classify(*node) == dialect::Op::kTrunc;
      if (*mode_ == "float" && !trunc) {
        QONNX_ASSIGN_OR_RETURN(const bool deferred, defer_to_floats(node, ctx));
        if (deferred) {
          ++folded_quantizers_;
          changed = true;
          continue;
        }
      }
      auto inputs = constant_inputs(g, *node);
      if (!inputs) continue;
      std::vector<const Tensor*> ptrs;
      for (const auto& t : *inputs) ptrs.push_back(t.defined() ? &t : nullptr);
      if (*mode_ == "int" && !trunc) {
        QONNX_RETURN_IF_ERROR(fold_to_integers(model, node, ptrs, ctx));
      } else if (*mode_ == "finn" && !trunc) {
        QONNX_RETURN_IF_ERROR(fold_for_finn(model, node, ptrs, ctx));
      } else {
        QONNX_RETURN_IF_ERROR(fold_to_floats(model, node, ptrs, ctx, "constant inputs, precomputed float tensor"));
      }
      ++folded_quantizers_;
      changed = true;
    }
    return changed;
  }

  // A weight quantizer on a weight in the loaded model's external data, folded to floats: its result
  // is computed when read (by the save, which writes it block by block as it is computed) instead of
  // now, so the float weights are neither held nor written to the scratch file and read back. The
  // parameters are read and checked now; anything unusual is left to the eager fold, which reports it.
  // Whether it folded.
  static Result<bool> defer_to_floats(ir::Node* node, pass::PassContext& ctx) {
    const dialect::Op op = dialect::classify(*node);
    if (op != dialect::Op::kQuant && op != dialect::Op::kBipolarQuant) return false;
    // The computation runs later with the global registry's Quant loops, outside this pass's context.
    if (&ctx.registry() != &exec::KernelRegistry::global()) return false;
    ir::Graph& g = *node->graph();
    const ir::Initializer* weight = g.initializer(node->input(0));
    if (!weight || !is_constant(node->input(0)) || !weight->external_in_source || weight->dtype() != DType::kFloat) return false;
    auto stored = ir::StoredTensorFile::of(*weight->proto, weight->base_dir);
    if (!stored.is_ok()) return false;
    auto deferred = std::make_shared<DeferredFold>(std::move(stored).value());
    deferred->weight_dims = weight->dims();
    deferred->bipolar_op = op == dialect::Op::kBipolarQuant;
    std::vector<Tensor> params(node->inputs().size());
    std::vector<const Tensor*> ptrs(node->inputs().size(), nullptr);
    Dims dims = weight->dims();
    for (size_t i = 1; i < node->inputs().size(); ++i) {
      const ir::Value* v = node->input(i);
      if (!v) continue;
      if (!is_constant(v)) return false;
      auto t = g.initializer_tensor(v);
      if (!t.is_ok()) return false;
      params[i] = std::move(t).value();
      ptrs[i] = &params[i];
      if (!exec::broadcast_dims(Dims(dims), params[i].dims(), &dims)) return false;
    }
    const quant::NodeInputs in(*node, ptrs);
    auto p = deferred->bipolar_op ? quant::read_bipolar_params(in) : quant::read_quant_params(in);
    if (!p.is_ok()) return false;
    deferred->params = std::move(p).value();
    deferred->dims = dims;
    ir::Initializer folded;
    QONNX_ASSIGN_OR_RETURN(folded.proto, ir::make_deferred_proto(DType::kFloat, dims,
                                                                 [deferred](const ir::ByteSink& sink) { return deferred->stream(sink); },
                                                                 &folded.base_dir));
    record_outcome(ctx, *node, "folded", "constant inputs, precomputed float tensor");
    folded.value = node->output(0);
    folded.proto->set_name(folded.value->name());
    g.remove_node(node);
    QONNX_RETURN_IF_ERROR(g.add_initializer(std::move(folded)));
    return true;
  }

  // What a deferred fold keeps: where the weight lies in its file, the quantizer's (small) parameters.
  struct DeferredFold {
    explicit DeferredFold(ir::StoredTensorFile file) : weight(std::move(file)) {}
    ir::StoredTensorFile weight;
    Dims weight_dims;
    Dims dims;  // the result's: the weight's broadcast with the parameters
    bool bipolar_op = false;
    quant::QuantParams params;  // BipolarQuant: its scale as read_bipolar_params gives it

    // Rows of the result in blocks of about this size, through one buffer: read from the weight's file,
    // quantized in place, handed over; no buffer of the whole tensor is zeroed. A block that stays in a
    // core's L2 cache between the read, the kernel and the write: 256 KiB blocks made the 12 x 8192 x
    // 8192 fold about a third faster than 4 MiB ones (docs/performance.md).
    static constexpr int64_t kBlockBytes = int64_t{256} << 10;

    // The rows [begin, end) of a parameter broadcast over the result: itself when it is the same for
    // every row (a lower rank, or 1 along the first axis).
    Tensor param_rows(const Tensor& t, int64_t begin, int64_t end) const {
      if (dims.empty() || t.rank() < dims.size() || t.dim(0) == 1) return t;
      Dims d = t.dims();
      d[0] = end - begin;
      Tensor rows = Tensor::uninitialized(t.dtype(), d);
      const size_t row_bytes = t.nbytes() / static_cast<size_t>(t.dim(0));
      std::memcpy(rows.raw(), static_cast<const char*>(t.raw()) + static_cast<size_t>(begin) * row_bytes, rows.nbytes());
      return rows;
    }

    // The quantizer on `x` (the weight's rows or the whole weight) into `y`, over out_dims.
    void quantize(const Dims& out_dims, const Tensor& x, const quant::QuantParams& p, float* y) const {
      if (bipolar_op) kernels::bipolar_quant_into(out_dims, x, p.scale, y);
      else kernels::quant_into(out_dims, x, p, y);
    }

    Status stream(const ir::ByteSink& sink) const {
      const int64_t numel = checked_numel(dims);
      if (numel == 0) return Status::ok();
      QONNX_ASSIGN_OR_RETURN(const ir::StoredTensorFile::Reader reader, weight.open());
      if (weight_dims != dims) {  // the weight is broadcast itself: computed whole
        Tensor x = Tensor::uninitialized(DType::kFloat, weight_dims);
        QONNX_RETURN_IF_ERROR(reader.read(0, x.raw(), x.nbytes()));
        Tensor y = Tensor::uninitialized(DType::kFloat, dims);
        quantize(dims, x, params, y.data<float>());
        return sink(y.raw(), y.nbytes());
      }
      const int64_t rows = dims.empty() ? 1 : dims[0];
      const int64_t row_bytes = numel / rows * static_cast<int64_t>(sizeof(float));
      const int64_t block_rows = std::clamp<int64_t>(kBlockBytes / row_bytes, 1, rows);
      Tensor block;
      for (int64_t r = 0; r < rows; r += block_rows) {
        Dims block_dims = dims;
        if (!dims.empty()) block_dims[0] = std::min(block_rows, rows - r);
        if (!block.defined() || block.dims() != block_dims) block = Tensor::uninitialized(DType::kFloat, block_dims);  // the first, a shorter last
        QONNX_RETURN_IF_ERROR(reader.read(static_cast<uint64_t>(r * row_bytes), block.raw(), block.nbytes()));
        quant::QuantParams p = params;
        const int64_t end = r + (dims.empty() ? 1 : block_dims[0]);
        p.scale = param_rows(params.scale, r, end);
        p.zeropt = param_rows(params.zeropt, r, end);
        quantize(block_dims, block, p, block.data<float>());
        QONNX_RETURN_IF_ERROR(sink(block.raw(), block.nbytes()));
      }
      return Status::ok();
    }
  };

  static Status fold_to_floats(ir::Model& model, ir::Node* node, const std::vector<const Tensor*>& inputs,
                               pass::PassContext& ctx, const std::string& detail) {
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec::evaluate_node(model, *node, inputs, ctx.registry()));
    record_outcome(ctx, *node, "folded", detail);
    ir::Graph& g = *node->graph();
    ir::Value* out = node->output(0);
    g.remove_node(node);
    return g.set_initializer(out, outs[0]);
  }

  Status fold_for_finn(ir::Model& model, ir::Node* node, const std::vector<const Tensor*>& inputs, pass::PassContext& ctx) {
    auto codes = integer_codes(*node, inputs);
    if (!codes.is_ok()) return std::move(codes).status().with_context(node->describe());
    auto& [q, p] = codes.value();
    auto fall_back = [&](const std::string& why) {
      ++float_fallbacks_;
      return fold_to_floats(model, node, inputs, ctx, "float weights: " + why);
    };
    if (!all_integral(p.zeropt)) return fall_back("the zero point is not an integer");
    // q - z, its range from the quantizer's bounds, and its type (FINN's INTk/UINTk/BIPOLAR/BINARY at z = 0).
    const bool zero_zeropt = all_zero(p.zeropt);
    const quant::IntRange bounds = p.bipolar() ? quant::IntRange{-1.0f, 1.0f} : quant::quant_int_range(p.bits, p.is_signed, p.narrow);
    const float* zs = p.zeropt.data<float>();
    const auto [z_lo, z_hi] = std::minmax_element(zs, zs + p.zeropt.numel());
    const double lo = double(bounds.min) - *z_hi, hi = double(bounds.max) - *z_lo;
    if (!zero_zeropt && std::max(-lo, hi) > 16777216.0)
      return fall_back(fmt::format("q - zero point spans [{}, {}], beyond float32's exact integers", lo, hi));
    const std::string datatype = zero_zeropt ? integer_datatype(p) : ir::smallest_integer_datatype(lo, hi).name;
    Tensor ints(DType::kFloat, q.dims());
    const float* code = q.data<float>();  // a structured binding cannot be captured before C++20
    exec::for_each_broadcast<1>(q.dims(), {&p.zeropt.dims()},
                                [&](int64_t o, const auto& off) { ints.data<float>()[o] = code[o] - zs[off[0]]; });
    const std::string what = zero_zeropt ? "codes" : "codes - zero point";
    ir::Graph& g = *node->graph();
    ir::Value* weight = node->output(0);
    if (all_equal_to(p.scale, 1.0f)) {
      record_outcome(ctx, *node, "folded", fmt::format("integer weights {} ({}), unit scale: no Mul", datatype, what));
      g.remove_node(node);
      QONNX_RETURN_IF_ERROR(g.set_initializer(weight, ints));
      g.set_finn_datatype(weight->name(), datatype);
      ++integer_weights_;
      return Status::ok();
    }
    const Tensor collapsed = collapse_constant_axes(p.scale, q.rank());
    auto move = scale_move(g, weight, collapsed);
    if (auto* why = std::get_if<std::string>(&move)) return fall_back("the scale cannot move behind the consumer: " + *why);
    const ScaleMove& m = std::get<ScaleMove>(move);
    const bool exact = !m.reassociates || all_powers_of_two(collapsed);
    record_outcome(ctx, *node, "folded",
                   fmt::format("integer weights {} ({}), scale {} moved behind {} input #{} as {} {}: {}", datatype, what,
                               dims_to_string(collapsed.dims()), m.consumer->describe(), m.weight_input,
                               m.divide_behind ? "Div" : "Mul", dims_to_string(m.dims),
                               !m.reassociates ? "the same products, selected: exact"
                               : exact ? "a power of two: exact barring overflow and subnormals"
                                       : "not a power of two: re-associates float arithmetic, results may differ in rounding"));
    if (!exact) {
      ++scales_moved_inexact_;
      const int64_t terms = reassociated_terms(m, q.dims());
      if (terms > max_terms_.value()) max_terms_ += terms - max_terms_.value();
    }
    g.remove_node(node);
    QONNX_RETURN_IF_ERROR(g.set_initializer(weight, ints));
    g.set_finn_datatype(weight->name(), datatype);
    // Rebuilds the consumer: m.consumer is gone after it.
    QONNX_RETURN_IF_ERROR(apply_scale_move(g, m, weight->name(), collapsed.reshaped(m.dims)));
    ++integer_weights_;
    ++scales_moved_;
    return Status::ok();
  }

  // How many products the consumer sums into one output element: the length of the re-associated sum
  // (at most, for ConvTranspose); 2 for the element-wise consumers (their bounds are 4-5 ulps).
  static int64_t reassociated_terms(const ScaleMove& m, const Dims& w) {
    const std::string& op = m.consumer->op_type();
    const int64_t rank = static_cast<int64_t>(w.size());
    auto product = [&](int64_t from, int64_t skip) {
      int64_t n = 1;
      for (int64_t d = from; d < rank; ++d) n *= d == skip ? 1 : w[static_cast<size_t>(d)];
      return n;
    };
    if (op == "Conv") return product(1, -1);
    if (op == "ConvTranspose") return product(0, 1);
    if (op == "MatMul") return rank < 2 ? w[0] : w[static_cast<size_t>(m.weight_input == 1 ? rank - 2 : rank - 1)];
    return 2;
  }

  // The consumer reads the integers; the scale goes in front of its other input (Add/Sub) and behind it.
  static Status apply_scale_move(ir::Graph& g, const ScaleMove& m, const std::string& weight_name, const Tensor& scale) {
    ir::Node* consumer = m.consumer;
    ir::Value* out = consumer->output(0);
    const std::string name = consumer->name().empty() ? out->name() : consumer->name();
    QONNX_ASSIGN_OR_RETURN(ir::Value* s, g.add_initializer_tensor(g.unique_name(weight_name + "_scale"), scale));
    std::vector<ir::Value*> inputs = consumer->inputs();
    if (m.other_input >= 0) {
      ir::Value* other = inputs[static_cast<size_t>(m.other_input)];
      QONNX_ASSIGN_OR_RETURN(ir::Node* div, g.insert_node(consumer, name + "_prescale", "Div", "", {other, s},
                                                          {g.unique_name(other->name() + "_prescaled")}));
      inputs[static_cast<size_t>(m.other_input)] = div->output(0);
    }
    // The consumer, rebuilt to write an unscaled value; the scale op writes its output.
    ir::Node* after = g.next_node(consumer);
    QONNX_ASSIGN_OR_RETURN(ir::Node* unscaled, g.insert_node(consumer, consumer->name(), consumer->op_type(), consumer->domain(),
                                                             inputs, {g.unique_name(out->name() + "_unscaled")}));
    unscaled->copy_attributes_from(*consumer);
    g.remove_node(consumer);
    return g.insert_node(after, name + "_scale", m.divide_behind ? "Div" : "Mul", "", {unscaled->output(0), s}, {out->name()})
        .status();
  }

  Status fold_to_integers(ir::Model& model, ir::Node* node, const std::vector<const Tensor*>& inputs,
                          pass::PassContext& ctx) {
    ir::Graph& g = *node->graph();
    auto codes = integer_codes(*node, inputs);
    if (!codes.is_ok()) return std::move(codes).status().with_context(node->describe());
    auto& [q, p] = codes.value();
    std::string datatype = integer_datatype(p);
    record_outcome(ctx, *node, "folded", fmt::format("integer weights ({}) + Mul by scale", datatype));
    ir::Value* out = node->output(0);
    const std::string base = out->name();
    const std::string node_name = node->name().empty() ? base : node->name();
    ir::Node* before = g.next_node(node);
    g.remove_node(node);
    QONNX_ASSIGN_OR_RETURN(ir::Value* current, g.add_initializer_tensor(g.unique_name(base + "_int"), q));
    g.set_finn_datatype(current->name(), datatype);
    if (!all_zero(p.zeropt)) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* zp, g.add_initializer_tensor(g.unique_name(base + "_zeropt"), p.zeropt));
      QONNX_ASSIGN_OR_RETURN(ir::Node* sub, g.insert_node(before, node_name + "_sub", "Sub", "", {current, zp},
                                                          {g.unique_name(base + "_centered")}));
      current = sub->output(0);
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* scale, g.add_initializer_tensor(g.unique_name(base + "_scale"), p.scale));
    auto mul = g.insert_node(before, node_name + "_mul", "Mul", "", {current, scale}, {base});
    return mul.status();
  }

  pass::Option<std::string> mode_{this, "mode", "float",
                                  "float | int (integer codes with a finn_datatype) | finn (integer weights, scale moved "
                                  "behind the consumer)",
                                  {"float", "int", "finn"}};
  pass::Statistic folded_quantizers_{this, "folded-quantizers", "quantizers on constants precomputed"};
  pass::Statistic integer_weights_{this, "integer-weights", "mode=finn: weights stored as integers with a finn_datatype"};
  pass::Statistic scales_moved_{this, "scales-moved", "mode=finn: weight scales moved behind their consumer"};
  pass::Statistic scales_moved_inexact_{this, "scales-moved-not-power-of-two",
                                        "mode=finn: moved scales that are not powers of two and re-associate float "
                                        "arithmetic (results may differ in rounding; Gather's selection excluded)"};
  pass::Statistic max_terms_{this, "max-reassociated-terms",
                             "mode=finn: the longest sum a non-power-of-two scale move re-associates (a maximum, not a count)"};
  pass::Statistic float_fallbacks_{this, "float-fallbacks", "mode=finn: weights folded to floats instead (outcome says why)"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_fold_quant_weights() { return std::make_unique<FoldQuantWeights>(); }

}  // namespace qonnx::passes
