// ascend-quant-matmul: DequantizeLinear(int8 x) x DequantizeLinear(int8 w) feeding MatMul or Gemm
// [+ constant bias] [-> QuantizeLinear(int8)] becomes Ascend's QuantBatchMatMul (SEMANTICS.md section 4):
//
//   x1 = the int8 activation codes, x2 = the int8 weight codes (w - z_w, stored layout, transpose_x2
//   when stored as (N, K)), scale = TransQuantParamV2(s_x * s_w[n] [/ s_y], [z_y]) which fold-constants
//   turns into uint64 words with the same kernel, bias = int32.
//
// What is exact, and what is not:
// - The integer part is exact. QuantBatchMatMul has no x1 zero point, so with codes q and zero point
//   z_x:  sum_k (q - z_x) * w'[k,n] = sum_k q * w'[k,n] - z_x * colsum(w')[n], and the last term goes
//   into the int32 bias. A constant float bias b goes there too when b[n] / (s_x * s_w[n]) is an integer
//   (within 1e-3 accumulator units); otherwise it stays a float Add after QuantBatchMatMul, exactly as in
//   the original graph (and a following QuantizeLinear is then not fused).
// - uint8 activations QuantizeLinear(x, s, z) [-> Clip(lo, hi)] are re-quantized to int8 by a copy with
//   zero point z - 128 [and Clip(lo - 128, hi - 128)]: saturate(round(x/s) + z - 128) is exactly the
//   uint8 code minus 128, so the effective int8 zero point is z - 128.
// - The only approximation is the scale: M = fp32(s_x * s_w[n] [/ s_y]) kept as FP19 (10 mantissa
//   bits): |M - M_exact| <= 2^-10 * M with round_mode 0 (truncation), 2^-11 * M with round_mode 1
//   (round half to even). A float output y = acc * M is therefore within 2^-10 (2^-11) of |y - bias| of
//   the exact result, plus float32 rounding; an int8 output can differ by one step where acc * M lies
//   that close to a rounding boundary. Output float16 (`output-dtype=float16`) adds its own rounding
//   (2^-11 relative).
//
// Anything else (float activations, per-channel activation scales, non-constant weights, weights that
// are not 2-D, Gemm alpha != 1, ...) is left alone with a warning saying why.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "qonnx/dialect/target_ops.h"
#include "passes/passes.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/kernels/ascend.h"

namespace qonnx::passes {
namespace {

namespace ascend = kernels::ascend;

// QuantBatchMatMul `dtype` values (SEMANTICS.md section 4).
constexpr int64_t kOutFloat32 = 0, kOutFloat16 = 1, kOutInt8 = 2, kOutBFloat16 = 27;
// A float bias counts as an integer number of accumulator steps when this close to one.
constexpr double kIntegralBiasTolerance = 1e-3;

bool is_op(const ir::Node* n, const char* op_type) {
  return n && ir::is_default_domain(n->domain()) && n->op_type() == op_type;
}

std::optional<Tensor> constant_of(const ir::Graph& g, const ir::Value* v) {
  if (!is_constant(v)) return std::nullopt;
  auto t = g.initializer_tensor(v);
  if (!t.is_ok()) return std::nullopt;
  return std::move(t).value();
}

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = exec::element_as_double(t, i);
  return out;
}

bool positive_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
}

// The per-tensor (one value) constant at input `i` of `node`, or nullopt.
std::optional<Tensor> scalar_constant(const ir::Graph& g, const ir::Node& node, size_t i) {
  auto t = constant_of(g, node.input(i));
  if (!t || t->numel() != 1) return std::nullopt;
  return t;
}

// The rank of `v` from its declared type, or by following shape-preserving ops back to a known one;
// -1 when unknown. (ONNX shape inference gives up on a Reshape whose shape is computed, as in the
// exported TFC models, though the rank is the shape input's length.) Not ir::Graph::rank_of: the
// declared type comes before a constant's own dims, and producers are followed.
int64_t inferred_rank(const ir::Graph& g, const ir::Value* v, int depth = 0) {
  if (!v || depth > 64) return -1;
  if (auto t = g.type_of(v); t && t->has_shape) return static_cast<int64_t>(t->dims.size());
  if (auto c = constant_of(g, v)) return static_cast<int64_t>(c->rank());
  const ir::Node* p = v->producer();
  if (!p || !ir::is_default_domain(p->domain())) return -1;
  const std::string& op = p->op_type();
  if (op == "Flatten") return 2;
  if (op == "Reshape") {
    if (auto shape = constant_of(g, p->input(1))) return shape->numel();
    auto t = g.type_of(p->input(1));
    return t && t->has_shape && t->dims.size() == 1 ? t->dims[0] : -1;
  }
  static const char* const kSameShape[] = {"QuantizeLinear", "DequantizeLinear", "Clip", "Relu", "BatchNormalization",
                                           "Identity", "Cast", "Sigmoid", "Tanh", "Neg", "Abs"};
  for (const char* same : kSameShape)
    if (op == same) return inferred_rank(g, p->input(0), depth + 1);
  static const char* const kBroadcast[] = {"Add", "Sub", "Mul", "Div", "MatMul", "QuantBatchMatMul"};
  for (const char* binary : kBroadcast)
    if (op == binary) {
      const int64_t a = inferred_rank(g, p->input(0), depth + 1), b = inferred_rank(g, p->input(1), depth + 1);
      const bool matmul = op == "MatMul" || op == "QuantBatchMatMul";
      if (a < 0 || b < 0 || (matmul && (a < 2 || b < 2))) return -1;
      return std::max(a, b);
    }
  return -1;
}

// The int8 activation operand x1 and its quantization.
struct Activation {
  ir::Value* codes = nullptr;        // int8 codes, used as they are
  const ir::Node* quantize = nullptr;  // or: a uint8 QuantizeLinear [-> Clip] chain to copy in int8
  const ir::Node* clip = nullptr;
  const ir::Node* dequantize = nullptr;  // the DequantizeLinear of the original codes
  double scale = 0;
  int32_t zero_point = 0;            // of the int8 codes
  DType float_type = DType::kFloat;  // the DequantizeLinear's output type
  // Flatten/Reshape between DequantizeLinear and the MatMul, nearest the DequantizeLinear first: a
  // per-tensor scale commutes with them, so they are repeated on the int8 codes.
  std::vector<const ir::Node*> layout;
};

// "" when `a` is DequantizeLinear(int8 or re-quantizable uint8 codes) with a per-tensor scale.
std::string match_activation(const ir::Graph& g, ir::Value* a, Activation& out) {
  const ir::Node* dq = a->producer();
  while (is_op(dq, "Flatten") || is_op(dq, "Reshape")) {
    out.layout.insert(out.layout.begin(), dq);
    dq = dq->input(0)->producer();
  }
  if (!is_op(dq, "DequantizeLinear")) return "the activation is not produced by DequantizeLinear";
  out.dequantize = dq;
  auto s = scalar_constant(g, *dq, 1);
  if (!s) return "the activation scale is not a constant per-tensor value";
  out.scale = doubles(*s)[0];
  out.float_type = s->dtype();
  if (!positive_finite({out.scale})) return fmt::format("the activation scale {} is not positive and finite", out.scale);
  DType code_type = DType::kUndefined;
  int32_t zp = 0;
  if (dq->input(2)) {
    auto z = scalar_constant(g, *dq, 2);
    if (!z) return "the activation zero point is not a constant per-tensor value";
    code_type = z->dtype();
    zp = static_cast<int32_t>(doubles(*z)[0]);
  } else if (auto t = g.type_of(dq->input(0))) {
    code_type = t->dtype;
  }
  if (code_type == DType::kInt8) {
    out.codes = dq->input(0);
    out.zero_point = zp;
    return "";
  }
  if (code_type != DType::kUInt8)
    return fmt::format("the activation codes are {}: QuantBatchMatMul takes int8 (or uint8 from QuantizeLinear)",
                       dtype_name(code_type));
  // uint8: find QuantizeLinear [-> Clip] with the same parameters, to copy it with zero point z - 128.
  const ir::Node* p = dq->input(0)->producer();
  if (is_op(p, "Clip")) {
    for (size_t i = 1; i < p->inputs().size(); ++i)
      if (p->input(i) && !scalar_constant(g, *p, i)) return "the uint8 activation's Clip bounds are not constant";
    out.clip = p;
    p = p->input(0)->producer();
  }
  if (!is_op(p, "QuantizeLinear"))
    return "the uint8 activation codes do not come from QuantizeLinear [-> Clip], so they cannot be re-quantized to int8";
  auto qs = scalar_constant(g, *p, 1);
  std::optional<Tensor> qz = p->input(2) ? scalar_constant(g, *p, 2) : std::nullopt;
  const bool same_scale = qs && doubles(*qs)[0] == out.scale;
  const bool same_zp = (p->input(2) == nullptr && zp == 0) || (qz && qz->dtype() == DType::kUInt8 && doubles(*qz)[0] == zp);
  if (!same_scale || !same_zp)
    return "the uint8 activation's QuantizeLinear and DequantizeLinear parameters differ";
  out.quantize = p;
  out.zero_point = zp - 128;
  return "";
}

// The int8 weight operand x2: w' = w - z_w in its stored layout.
struct Weight {
  Tensor codes;                // int8, rank 2
  const ir::Node* dequantize = nullptr;  // the DequantizeLinear of the stored codes
  bool transposed = false;     // stored as (N, K): transpose_x2 = 1
  int64_t k = 0, n = 0;
  std::vector<double> scale;   // 1 or n values
  std::vector<int64_t> column_sums;  // sum_k w'[k, n]
};

// "" when `b` is DequantizeLinear(constant 2-D codes) [-> Transpose(1, 0) when allowed], per-tensor or
// per output channel, with w - z_w within int8.
std::string match_weight(const ir::Graph& g, ir::Value* b, bool transposed, bool allow_transpose_node, Weight& out) {
  const ir::Node* p = b->producer();
  if (allow_transpose_node && is_op(p, "Transpose")) {
    const auto perm = p->attr_ints("perm");
    if (!perm.empty() && perm != std::vector<int64_t>{1, 0}) return "the weight's Transpose is not perm=[1, 0]";
    transposed = !transposed;
    p = p->input(0)->producer();
  }
  if (!is_op(p, "DequantizeLinear")) return "the weight is not produced by DequantizeLinear";
  out.dequantize = p;
  auto q = constant_of(g, p->input(0));
  auto s = constant_of(g, p->input(1));
  std::optional<Tensor> z = p->input(2) ? constant_of(g, p->input(2)) : std::nullopt;
  if (!q || !s || (p->input(2) && !z)) return "the weight codes, scale or zero point are not constant";
  if (q->dtype() != DType::kInt8 && q->dtype() != DType::kUInt8)
    return fmt::format("the weight codes are {}, not int8 or uint8", dtype_name(q->dtype()));
  if (q->rank() != 2) return fmt::format("the weight codes have shape {}, not 2-D", dims_to_string(q->dims()));
  const int n_axis = transposed ? 0 : 1;
  out.transposed = transposed;
  out.n = q->dim(static_cast<size_t>(n_axis));
  out.k = q->dim(static_cast<size_t>(1 - n_axis));
  auto axis_attr = p->attr<int64_t>("axis", 1);
  if (!axis_attr.is_ok()) return axis_attr.status().message();
  int64_t axis = axis_attr.value();
  if (axis < 0) axis += 2;
  auto per_channel_ok = [&](const Tensor& t) {
    return t.numel() == 1 || (t.rank() == 1 && t.numel() == out.n && axis == n_axis);
  };
  if (!per_channel_ok(*s) || (z && !per_channel_ok(*z)))
    return fmt::format("the weight scale is neither per-tensor nor per output channel (axis {} of the stored weight)", n_axis);
  out.scale = doubles(*s);
  if (!positive_finite(out.scale)) return "a weight scale is not positive and finite";
  const std::vector<double> zp = z ? doubles(*z) : std::vector<double>{0.0};
  const std::vector<double> codes = doubles(*q);
  out.codes = Tensor(DType::kInt8, q->dims());
  out.column_sums.assign(static_cast<size_t>(out.n), 0);
  for (int64_t r = 0; r < q->dim(0); ++r)
    for (int64_t c = 0; c < q->dim(1); ++c) {
      const int64_t i = r * q->dim(1) + c;
      const int64_t channel = transposed ? r : c;
      const double v = codes[static_cast<size_t>(i)] - zp[zp.size() == 1 ? 0 : static_cast<size_t>(channel)];
      if (v < -128 || v > 127) return fmt::format("the weight code minus its zero point, {}, does not fit int8", v);
      out.codes.data<int8_t>()[i] = static_cast<int8_t>(v);
      out.column_sums[static_cast<size_t>(channel)] += static_cast<int64_t>(v);
    }
  return "";
}

// A constant float bias that broadcasts along the output's last axis only: n values (or 1).
std::optional<std::vector<double>> row_bias(const Tensor& t, int64_t n) {
  if (!dtype_is_float(t.dtype())) return std::nullopt;
  bool leading_ones = true;
  for (size_t d = 0; d + 1 < t.rank(); ++d) leading_ones &= t.dim(d) == 1;
  if (t.numel() != 1 && !(t.rank() >= 1 && t.rank() <= 2 && leading_ones && t.dim(t.rank() - 1) == n)) return std::nullopt;
  std::vector<double> v = doubles(t);
  if (v.size() == 1) v.assign(static_cast<size_t>(n), v[0]);
  return v;
}

struct Match {
  ir::Node* matmul = nullptr;        // MatMul or Gemm
  ir::Node* bias_add = nullptr;      // MatMul's Add(constant bias), absorbed into the int32 bias
  ir::Node* requantize = nullptr;    // QuantizeLinear(int8) fused into an int8 output
  Activation x;
  Weight w;
  bool transpose_x1 = false;
  std::vector<double> bias;          // float bias (n values), empty when none
  bool bias_integral = false;        // bias goes into the int32 bias; else a float Add after
  double out_scale = 1;              // s_y of the fused QuantizeLinear
  int32_t out_zero_point = 0;
};

// Where a rewrite of a match puts its nodes: the matched MatMul/Gemm, bias Add and requantizing
// QuantizeLinear are removed, the new nodes go where they were, named after the matmul (`base`), and
// the one created with `final_output` writes the matched output.
class RewriteSite {
 public:
  RewriteSite(ir::Graph& g, const Match& m, const std::string& name_suffix) : g_(g) {
    ir::Node* last = m.requantize ? m.requantize : m.bias_add ? m.bias_add : m.matmul;
    before_ = g.next_node(last);
    out_name_ = last->output(0)->name();
    base_ = (m.matmul->name().empty() ? m.matmul->output(0)->name() : m.matmul->name()) + name_suffix;
    for (ir::Node* n : {m.requantize, m.bias_add, m.matmul})
      if (n) g.remove_node(n);
  }

  Result<ir::Value*> constant(const std::string& suffix, const Tensor& t) {
    return g_.add_initializer_tensor(g_.unique_name(base_ + "_" + suffix), t);
  }
  Result<ir::Node*> node(const std::string& suffix, const std::string& op, const std::vector<ir::Value*>& inputs,
                         bool final_output, const std::string& domain = "") {
    const std::string out = final_output ? out_name_ : g_.unique_name(base_ + "_" + suffix);
    final_done_ |= final_output;
    return g_.insert_node(before_, g_.unique_name(base_ + "_" + suffix), op, domain, inputs, {out});
  }
  // The activation's Flatten/Reshape chain, copied onto `x`.
  Result<ir::Value*> copy_layout(const Match& m, ir::Value* x, const std::string& prefix) {
    for (const ir::Node* layout : m.x.layout) {
      std::vector<ir::Value*> ins = layout->inputs();
      ins[0] = x;
      QONNX_ASSIGN_OR_RETURN(ir::Node* copy, node(prefix + layout->op_type(), layout->op_type(), ins, false));
      copy->copy_attributes_from(*layout);
      x = copy->output(0);
    }
    return x;
  }
  // y + the match's float bias (in the graph's float type), the final output.
  Status add_float_bias(const Match& m, ir::Value* y) {
    Tensor bias(DType::kFloat, {m.w.n});
    for (size_t c = 0; c < m.bias.size(); ++c) bias.data<float>()[c] = static_cast<float>(m.bias[c]);
    QONNX_ASSIGN_OR_RETURN(const Tensor typed_bias, exec::cast_tensor(bias, m.x.float_type));
    QONNX_ASSIGN_OR_RETURN(ir::Value* bias_v, constant("bias", typed_bias));
    return node("bias_add", "Add", {y, bias_v}, true).status();
  }
  bool final_done() const { return final_done_; }

 private:
  ir::Graph& g_;
  const ir::Node* before_ = nullptr;
  std::string out_name_, base_;
  bool final_done_ = false;
};

class AscendQuantMatMul : public pass::GraphPass {
 public:
  // The main graph only: the fused form and its FP19 reference are verified on flat graphs; a MatMul in
  // an If/Loop/Scan body keeps its exact standard form, just not fused.
  AscendQuantMatMul() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "ascend-quant-matmul"; }
  std::string summary() const override {
    return "DequantizeLinear(int8 x) x DequantizeLinear(int8 w) -> MatMul/Gemm [+ bias] [-> QuantizeLinear int8] "
           "to Ascend QuantBatchMatMul with TransQuantParamV2 scale words and an int32 bias";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    std::vector<ir::Node*> candidates;
    for (const auto& n : g.nodes())
      if ((is_op(n.get(), "MatMul") || is_op(n.get(), "Gemm")) && n->output(0)) candidates.push_back(n.get());
    bool changed = false;
    for (ir::Node* node : candidates) {
      Match m;
      m.matmul = node;
      if (std::string why = match(g, m); !why.empty()) {
        ctx.warn(node, why + ": left in place");
        ++left_;
        continue;
      }
      if (*emit_ == "ascend" && !model.opset(dialect::kAscendDomain)) {
        model.ensure_import(dialect::kAscendDomain, dialect::kAscendDomainVersion);
      }
      Status st = *emit_ == "ascend" ? rewrite(g, m, ctx) : rewrite_as_reference(g, m);
      if (!st.is_ok()) return std::move(st).with_context(node->describe());
      changed = true;
    }
    return changed;
  }

 private:
  // Fills `m` (whose matmul is set); returns why not when the pattern does not apply.
  std::string match(const ir::Graph& g, Match& m) const {
    ir::Node* node = m.matmul;
    const bool gemm = node->op_type() == "Gemm";
    if (node->inputs().size() < 2 || !node->input(0) || !node->input(1)) return "missing inputs";
    // Gemm's attributes; a mistyped one is why not.
    auto alpha = node->attr<float>("alpha", 1.0f), beta = node->attr<float>("beta", 1.0f);
    auto trans_a = node->attr<bool>("transA", false), trans_b = node->attr<bool>("transB", false);
    if (gemm)
      for (const Status* st : {&alpha.status(), &beta.status(), &trans_a.status(), &trans_b.status()})
        if (!st->is_ok()) return st->message();
    if (gemm && alpha.value() != 1.0f) return "Gemm alpha is not 1";
    m.transpose_x1 = gemm && trans_a.value();
    if (std::string why = match_activation(g, node->input(0), m.x); !why.empty()) return why;
    if (!gemm) {
      // QuantBatchMatMul needs rank >= 2 operands; MatMul also takes 1-D ones.
      const int64_t rank = inferred_rank(g, node->input(0));
      if (rank < 0) return "the activation's rank is unknown (run infer-shapes first)";
      if (rank < 2) return "the activation is 1-D";
    }
    const bool w_transposed = gemm && trans_b.value();
    if (std::string why = match_weight(g, node->input(1), w_transposed, !gemm, m.w); !why.empty()) return why;

    // Bias: Gemm's C, or a MatMul's only consumer Add(constant).
    ir::Value* result = node->output(0);
    if (gemm && node->input(2)) {
      auto c = constant_of(g, node->input(2));
      if (!c) return "Gemm's C is not constant";
      auto b = row_bias(*c, m.w.n);
      if (!b) return fmt::format("Gemm's C (shape {}) is not a per-column bias", dims_to_string(c->dims()));
      for (double& v : *b) v = static_cast<float>(beta.value() * static_cast<float>(v));
      m.bias = *b;
    } else if (!gemm && result->uses().size() == 1 && !result->is_graph_output()) {
      ir::Node* add = result->uses()[0].node;
      if (is_op(add, "Add") && add->inputs().size() == 2) {
        const ir::Value* other = add->input(1 - static_cast<size_t>(result->uses()[0].input_index));
        auto c = constant_of(g, other);
        std::optional<std::vector<double>> b = c ? row_bias(*c, m.w.n) : std::nullopt;
        if (b && integral_bias(m, *b)) {
          m.bias = *b;
          m.bias_add = add;
          result = add->output(0);
        }
      }
    }
    m.bias_integral = !m.bias.empty() && integral_bias(m, m.bias);

    // int8 requantization: the result's only consumer QuantizeLinear(per-tensor, int8 zero point).
    if ((m.bias.empty() || m.bias_integral) && result->uses().size() == 1 && !result->is_graph_output() &&
        result->uses()[0].input_index == 0) {
      ir::Node* q = result->uses()[0].node;
      if (is_op(q, "QuantizeLinear") && q->input(2)) {
        auto s = scalar_constant(g, *q, 1);
        auto z = scalar_constant(g, *q, 2);
        if (s && z && z->dtype() == DType::kInt8 && positive_finite({doubles(*s)[0]})) {
          m.requantize = q;
          m.out_scale = doubles(*s)[0];
          m.out_zero_point = static_cast<int32_t>(doubles(*z)[0]);
        }
      }
    }
    // Scales FP19 can hold, and an int32 accumulator that cannot overflow.
    for (double sw : m.w.scale) {
      const float scale = static_cast<float>(m.x.scale * sw / m.out_scale);
      if (!std::isnormal(scale)) return fmt::format("the combined scale {} is not a normal float32", scale);
    }
    int64_t largest_bias = 0;
    for (int64_t v : int32_bias(m)) largest_bias = std::max(largest_bias, v < 0 ? -v : v);
    if (m.w.k * 128 * 128 + largest_bias > std::numeric_limits<int32_t>::max())
      return "the int32 accumulator could overflow";
    return "";
  }

  // Whether b[n] / (s_x * s_w[n]) is an integer number of accumulator steps.
  static bool integral_bias(const Match& m, const std::vector<double>& b) {
    for (size_t c = 0; c < b.size(); ++c) {
      const double r = b[c] / (m.x.scale * m.w.scale[m.w.scale.size() == 1 ? 0 : c]);
      if (std::abs(r) > 1e9 || std::abs(r - std::nearbyint(r)) > kIntegralBiasTolerance) return false;
    }
    return true;
  }

  // round(b[n] / (s_x * s_w[n])) for an integral bias, else 0.
  static std::vector<int64_t> float_bias_steps(const Match& m) {
    std::vector<int64_t> out(static_cast<size_t>(m.w.n), 0);
    if (m.bias_integral)
      for (size_t c = 0; c < out.size(); ++c)
        out[c] = static_cast<int64_t>(std::nearbyint(m.bias[c] / (m.x.scale * m.w.scale[m.w.scale.size() == 1 ? 0 : c])));
    return out;
  }

  // -z_x * colsum(w')[n] + round(b[n] / (s_x * s_w[n])) for an integral bias.
  static std::vector<int64_t> int32_bias(const Match& m) {
    std::vector<int64_t> out = float_bias_steps(m);
    for (size_t c = 0; c < out.size(); ++c) out[c] -= static_cast<int64_t>(m.x.zero_point) * m.w.column_sums[c];
    return out;
  }

  // The FP19 scales TransQuantParamV2 encodes for `m` (one per word), as floats.
  std::vector<float> fp19_scales(const Match& m) const {
    std::vector<float> out;
    for (double sw : m.w.scale) {
      const float scale = static_cast<float>(m.x.scale * sw / m.out_scale);
      out.push_back(ascend::decode_trans_quant_param(ascend::encode_trans_quant_param(scale, std::nullopt, static_cast<int>(*round_mode_))).scale);
    }
    return out;
  }

  int64_t float_dtype_attr(DType t) const {
    if (*output_dtype_ == "float16") return kOutFloat16;
    switch (t) {
      case DType::kFloat16: return kOutFloat16;
      case DType::kBFloat16: return kOutBFloat16;
      default: return kOutFloat32;
    }
  }

  // The output type QuantBatchMatMul computes for `m`, and whether a Cast and a float bias Add follow it.
  struct GemmOutput {
    int64_t dtype;
    bool needs_cast, float_bias_add;
  };
  GemmOutput gemm_output(const Match& m) const {
    const int64_t dtype = m.requantize ? kOutInt8 : float_dtype_attr(m.x.float_type);
    return {dtype, !m.requantize && dtype == kOutFloat16 && m.x.float_type != DType::kFloat16,
            !m.bias.empty() && !m.bias_integral};
  }

  Status rewrite(ir::Graph& g, const Match& m, pass::PassContext& ctx) {
    ir::Value* act_input = m.x.quantize ? m.x.quantize->input(0) : nullptr;
    // The uint8 chain's parameters, read before anything is removed.
    Tensor q_scale, clip_lo, clip_hi;
    if (m.x.quantize) {
      q_scale = constant_of(g, m.x.quantize->input(1)).value();
      if (m.x.clip) {
        if (m.x.clip->input(1)) clip_lo = shifted_int8(constant_of(g, m.x.clip->input(1)).value());
        if (m.x.clip->input(2)) clip_hi = shifted_int8(constant_of(g, m.x.clip->input(2)).value());
      }
    }
    const GemmOutput out = gemm_output(m);
    const int64_t gemm_dtype = out.dtype;
    const bool needs_cast = out.needs_cast, float_bias_add = out.float_bias_add;
    RewriteSite site(g, m, "");

    // x1: the int8 codes, or an int8 copy of the uint8 QuantizeLinear [-> Clip].
    ir::Value* x1 = m.x.codes;
    if (m.x.quantize) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* zp, site.constant("x_zero_point_int8", Tensor::scalar<int8_t>(DType::kInt8, static_cast<int8_t>(m.x.zero_point))));
      QONNX_ASSIGN_OR_RETURN(ir::Value* qs, site.constant("x_scale", q_scale));
      QONNX_ASSIGN_OR_RETURN(ir::Node* q, site.node("x_int8", "QuantizeLinear", {act_input, qs, zp}, false));
      x1 = q->output(0);
      if (m.x.clip) {
        ir::Value* lo = nullptr;
        ir::Value* hi = nullptr;
        if (clip_lo.defined()) {
          QONNX_ASSIGN_OR_RETURN(lo, site.constant("x_clip_min_int8", clip_lo));
        }
        if (clip_hi.defined()) {
          QONNX_ASSIGN_OR_RETURN(hi, site.constant("x_clip_max_int8", clip_hi));
        }
        QONNX_ASSIGN_OR_RETURN(ir::Node* c, site.node("x_int8_clip", "Clip", {x1, lo, hi}, false));
        x1 = c->output(0);
      }
      ++uint8_activations_shifted_;
    }
    QONNX_ASSIGN_OR_RETURN(x1, site.copy_layout(m, x1, "x_int8_"));
    QONNX_ASSIGN_OR_RETURN(ir::Value* x2, site.constant("x2_int8", m.w.codes));

    // Scale words: TransQuantParamV2(s_x * s_w [/ s_y], [z_y]); fold-constants makes them uint64.
    Tensor scale(DType::kFloat, {static_cast<int64_t>(m.w.scale.size())});
    for (size_t c = 0; c < m.w.scale.size(); ++c)
      scale.data<float>()[c] = static_cast<float>(m.x.scale * m.w.scale[c] / m.out_scale);
    QONNX_ASSIGN_OR_RETURN(ir::Value* scale_v, site.constant("dequant_scale", scale));
    std::vector<ir::Value*> tqp_inputs = {scale_v};
    if (m.requantize) {
      Tensor offset(DType::kFloat, {1});
      offset.data<float>()[0] = static_cast<float>(m.out_zero_point);
      QONNX_ASSIGN_OR_RETURN(ir::Value* offset_v, site.constant("offset", offset));
      tqp_inputs.push_back(offset_v);
    }
    QONNX_ASSIGN_OR_RETURN(ir::Node* tqp, site.node("scale_words", dialect::kTransQuantParamV2, tqp_inputs, false, dialect::kAscendDomain));
    tqp->set_attr("round_mode", round_mode_);

    std::vector<ir::Value*> inputs = {x1, x2, tqp->output(0)};
    const std::vector<int64_t> bias = int32_bias(m);
    if (std::any_of(bias.begin(), bias.end(), [](int64_t v) { return v != 0; })) {
      Tensor b(DType::kInt32, {m.w.n});
      for (size_t c = 0; c < bias.size(); ++c) b.data<int32_t>()[c] = static_cast<int32_t>(bias[c]);
      QONNX_ASSIGN_OR_RETURN(ir::Value* bias_v, site.constant("bias_int32", b));
      inputs.push_back(nullptr);  // offset: packed into the scale words
      inputs.push_back(bias_v);
    }
    const bool qbmm_last = !needs_cast && !float_bias_add;
    QONNX_ASSIGN_OR_RETURN(ir::Node* qbmm, site.node("quant_matmul", dialect::kQuantBatchMatMul, inputs, qbmm_last, dialect::kQuantBatchMatMulDomain));
    qbmm->set_attr("dtype", gemm_dtype);
    qbmm->set_attr("transpose_x1", m.transpose_x1 ? 1 : 0);
    qbmm->set_attr("transpose_x2", m.w.transposed ? 1 : 0);
    ir::Value* y = qbmm->output(0);
    if (needs_cast) {
      QONNX_ASSIGN_OR_RETURN(ir::Node* cast, site.node("cast", "Cast", {y}, !float_bias_add));
      cast->set_attr("to", static_cast<int64_t>(m.x.float_type));
      y = cast->output(0);
    }
    if (float_bias_add) {
      QONNX_RETURN_IF_ERROR(site.add_float_bias(m, y));
      ++float_bias_kept_;
    }
    ++(m.requantize ? quant_matmul_int8_output_ : quant_matmul_float_output_);
    return Status::ok();
  }

  // The FP19 reference of `m` (emit=fp19-reference, for `convert --check`): QuantBatchMatMul's arithmetic
  // in standard ops, from the original codes and zero points rather than the rewrite's int8 operands
  // and folded bias, so the rewrite is checked against it exactly:
  //   acc = MatMulInteger(x codes, w codes, z_x, z_w) [+ int32 bias steps]; y = Cast<float>(acc) * FP19(M)
  //   int8 output: QuantizeLinear(y, 1, z_y) (the word's offset is z_y; |z_y| <= 128 saturates alike);
  //   float16/bfloat16 outputs: Cast, then the Cast back and the float bias Add as in the rewrite.
  Status rewrite_as_reference(ir::Graph& g, const Match& m) {
    const GemmOutput out = gemm_output(m);
    const int64_t gemm_dtype = out.dtype;
    const bool needs_cast = out.needs_cast, float_bias_add = out.float_bias_add;
    RewriteSite site(g, m, "_fp19ref");
    auto cast = [&](ir::Value* v, DType to, bool final_output) -> Result<ir::Value*> {
      QONNX_ASSIGN_OR_RETURN(ir::Node* c, site.node("cast", "Cast", {v}, final_output));
      c->set_attr("to", static_cast<int64_t>(to));
      return c->output(0);
    };

    QONNX_ASSIGN_OR_RETURN(ir::Value* a, site.copy_layout(m, m.x.dequantize->input(0), "x_"));
    if (m.transpose_x1) {
      QONNX_ASSIGN_OR_RETURN(ir::Node* t, site.node("x_transposed", "Transpose", {a}, false));
      a = t->output(0);
    }
    ir::Value* b = m.w.dequantize->input(0);
    if (m.w.transposed) {
      QONNX_ASSIGN_OR_RETURN(ir::Node* t, site.node("w_transposed", "Transpose", {b}, false));
      b = t->output(0);
    }
    QONNX_ASSIGN_OR_RETURN(ir::Node* mm, site.node("acc", "MatMulInteger", {a, b, m.x.dequantize->input(2), m.w.dequantize->input(2)}, false));
    ir::Value* acc = mm->output(0);
    const std::vector<int64_t> steps = float_bias_steps(m);
    if (std::any_of(steps.begin(), steps.end(), [](int64_t v) { return v != 0; })) {
      Tensor t(DType::kInt32, {m.w.n});
      for (size_t c = 0; c < steps.size(); ++c) t.data<int32_t>()[c] = static_cast<int32_t>(steps[c]);
      QONNX_ASSIGN_OR_RETURN(ir::Value* bias_v, site.constant("bias_steps", t));
      QONNX_ASSIGN_OR_RETURN(ir::Node* add, site.node("acc_bias", "Add", {acc, bias_v}, false));
      acc = add->output(0);
    }
    QONNX_ASSIGN_OR_RETURN(ir::Value* accf, cast(acc, DType::kFloat, false));
    const std::vector<float> fp19 = fp19_scales(m);
    Tensor scale(DType::kFloat, {static_cast<int64_t>(fp19.size())});
    std::copy(fp19.begin(), fp19.end(), scale.data<float>());
    QONNX_ASSIGN_OR_RETURN(ir::Value* scale_v, site.constant("fp19_scale", scale));
    const bool mul_last = !m.requantize && gemm_dtype == kOutFloat32 && !float_bias_add;
    QONNX_ASSIGN_OR_RETURN(ir::Node* mul, site.node("scaled", "Mul", {accf, scale_v}, mul_last));
    ir::Value* y = mul->output(0);
    if (m.requantize) {
      QONNX_ASSIGN_OR_RETURN(ir::Value* one, site.constant("unit_scale", Tensor::scalar<float>(DType::kFloat, 1.0f)));
      QONNX_ASSIGN_OR_RETURN(ir::Value* zp, site.constant("y_zero_point", Tensor::scalar<int8_t>(DType::kInt8, static_cast<int8_t>(m.out_zero_point))));
      return site.node("requantized", "QuantizeLinear", {y, one, zp}, true).status();
    }
    if (gemm_dtype != kOutFloat32) {
      const DType narrow = gemm_dtype == kOutBFloat16 ? DType::kBFloat16 : DType::kFloat16;
      QONNX_ASSIGN_OR_RETURN(y, cast(y, narrow, !needs_cast && !float_bias_add));
    }
    if (needs_cast) {
      QONNX_ASSIGN_OR_RETURN(y, cast(y, m.x.float_type, !float_bias_add));
    }
    if (float_bias_add) QONNX_RETURN_IF_ERROR(site.add_float_bias(m, y));
    if (!site.final_done()) return Status(Code::kFailed, "the FP19 reference did not produce the matmul's output");
    return Status::ok();
  }

  // A uint8 Clip bound moved to the int8 codes (bound - 128).
  static Tensor shifted_int8(const Tensor& bound) {
    return Tensor::scalar<int8_t>(DType::kInt8, static_cast<int8_t>(exec::element_as_double(bound, 0) - 128));
  }

  // 1 by measurement (docs/ascend.md): on 40 generated int8 MLPs it flips 43% fewer output steps than 0.
  pass::Option<int64_t> round_mode_{this, "round-mode", 1,
                                    "TransQuantParamV2 round_mode: 1 round the scale half to even to FP19 (closer), 0 "
                                    "truncate (the hardware op's own default)",
                                    {0, 1}};
  pass::Option<std::string> emit_{this, "emit", "ascend",
                                  "ascend: QuantBatchMatMul with TransQuantParamV2 words | fp19-reference: the same "
                                  "arithmetic in standard ONNX ops with the FP19 scales as floats (convert --check's exact reference)",
                                  {"ascend", "fp19-reference"}};
  pass::Option<std::string> output_dtype_{this, "output-dtype", "graph",
                                          "float outputs: graph (the graph's float type, no Cast) | float16 (dtype 1, Cast back)",
                                          {"graph", "float16"}};
  pass::Statistic left_{this, "left", "nodes left in place (reported)"};
  pass::Statistic uint8_activations_shifted_{this, "uint8-activations-shifted", "uint8 activations shifted to int8 exactly"};
  pass::Statistic float_bias_kept_{this, "float-bias-kept", "float biases kept beside the matmul"};
  pass::Statistic quant_matmul_int8_output_{this, "quant-matmul-int8-output", "QuantBatchMatMul with an int8 output"};
  pass::Statistic quant_matmul_float_output_{this, "quant-matmul-float-output", "QuantBatchMatMul with a float output"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_ascend_quant_matmul() { return std::make_unique<AscendQuantMatMul>(); }

}  // namespace qonnx::passes
