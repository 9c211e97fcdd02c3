// to-channels-last: Conv, MaxPool and BatchNormalization on 3-D/4-D data become their
// qonnx.custom_op.channels_last forms, and the graph around them computes in channels-last layout
// wherever that needs no extra Transpose.
//
// qonnx (ConvertToChannelsLastAndClean) inserts Transposes around every such node and then moves
// them pairwise up and down until they cancel, which stops at forks, joins and Resize (qonnx #100,
// #114, #149). Here the layout is a property of each tensor, decided for the whole graph first:
//  - the channels-last ops read and write channels-last tensors;
//  - layout-free ops (element-wise ops and quantizers with broadcast parameters, Concat, nearest
//    Resize) take the layout of their data inputs when the majority of those are channels-last, and
//    also when every reader of their result wants channels-last and at most one input would need a
//    Transpose (so the Transpose moves upstream, into constants where it can);
//  - everything else, and every graph output, sees channels-first tensors as before.
// Then one Transpose is inserted per tensor and direction where a reader wants the other layout,
// constants are transposed in place of a Transpose node, and attributes that name axes (Concat,
// QuantizeLinear/DequantizeLinear) or list per-axis values (Resize scales/sizes/roi) are permuted.
// Every rewrite only moves data, so the result computes bit for bit what the input did.
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "passes/layout_perm.h"
#include "qonnx/pass/rewriter.h"
#include "passes/passes.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/executor.h"

namespace qonnx::passes {
namespace {

// out.dims[i] = in.dims[perm[i]].
Tensor transpose_tensor(const Tensor& in, const std::vector<int64_t>& perm) {
  const size_t rank = in.rank();
  Dims out_dims(rank);
  for (size_t i = 0; i < rank; ++i) out_dims[i] = in.dim(static_cast<size_t>(perm[i]));
  Tensor out(in.dtype(), out_dims);
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in.dim(d);
  const size_t elem = dtype_size(in.dtype());
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += index[i] * in_strides[static_cast<size_t>(perm[i])];
    if (in.dtype() == DType::kString) out.strings()[static_cast<size_t>(o)] = in.strings()[static_cast<size_t>(src)];
    else std::memcpy(static_cast<uint8_t*>(out.raw()) + static_cast<size_t>(o) * elem,
                     static_cast<const uint8_t*>(in.raw()) + static_cast<size_t>(src) * elem, elem);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < out_dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

bool is_unary_elementwise(const std::string& op) {
  static const char* const kOps[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Selu", "Elu", "Celu", "HardSigmoid",
                                     "HardSwish", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil",
                                     "Round", "Sign", "Erf", "Softplus", "Softsign", "Identity", "Cast", "Not",
                                     "ThresholdedRelu", "Sin", "Cos", "IsNaN", "IsInf"};
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

bool is_broadcast_elementwise(const std::string& op) {
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal", "Greater",
                                     "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Where", "PRelu",
                                     "Mod", "Clip"};
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

enum class Kind {
  kFixed,        // computes channels-first, as before
  kLayoutOp,     // becomes (or already is) a channels_last op
  kElementwise,  // per element, constant parameters broadcast
  kLinearQuant,  // QuantizeLinear / DequantizeLinear: data at input 0, `axis` names the channel axis
  kConcat,
  kResize,       // nearest, constant scales/sizes
  kToCf,         // Transpose (N, d..., C) -> (N, C, d...): vanishes when its result may stay channels-last
  kToCl,         // Transpose (N, C, d...) -> (N, d..., C): vanishes when its input is channels-last
};

class ToChannelsLast : public pass::GraphPass {
 public:
  // Bodies of If/Loop/Scan keep their layout: a body reads outer tensors as they are (nodes with bodies
  // are fixed points of the layout), so only the main graph is converted.
  ToChannelsLast() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "to-channels-last"; }
  std::string summary() const override {
    return "Conv/MaxPool/BatchNormalization to qonnx.custom_op.channels_last, the graph around them in channels-last "
           "layout (Transposes through element-wise ops, quantizers, Concat, nearest Resize, forks and joins; into "
           "constants)";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    return convert(model, g, ctx);
  }
  Result<bool> finish(ir::Model& model, bool changed, pass::PassContext& ctx) override {
    if (changed) model.ensure_import(dialect::kChannelsLastDomain, std::max<int64_t>(model.opset("").value_or(1), 1));
    return changed;
  }

 private:
  // The declared type of a tensor that becomes channels-last.
  struct Retype {
    DType dtype = DType::kFloat;
    Dims dims;
  };
  struct State {
    std::vector<const ir::Node*> order;
    std::map<const ir::Node*, Kind> kind;
    std::map<const ir::Node*, int64_t> rank;  // data rank of layout-free and layout ops
    std::map<const ir::Node*, bool> node_cl;
    std::vector<char> value_cl;               // by value id
    std::vector<char> pinned;                 // by value id: stays channels-first (a vanishing kToCf reads it)
  };

  static bool has_implicit_use(const ir::Value* v) {
    for (const ir::Use& u : v->uses())
      if (u.input_index == ir::kImplicitInput) return true;
    return false;
  }

  // A data input of a layout-free node: computed at run time with the node's rank.
  static bool is_data_input(const ir::Graph& g, const ir::Value* v, int64_t rank) {
    return v && !is_constant(v) && g.rank_of(v) == rank;
  }

  Kind classify(const ir::Model& model, const ir::Graph& g, const ir::Node& n, int64_t* rank) const {
    const dialect::Op op = dialect::classify(n);
    if (op == dialect::Op::kChannelsLastConv || op == dialect::Op::kChannelsLastMaxPool ||
        op == dialect::Op::kChannelsLastBatchNormalization) {
      *rank = g.rank_of(n.input(0));
      return *rank >= 3 ? Kind::kLayoutOp : Kind::kFixed;
    }
    if (n.outputs().size() != 1 || !n.output(0) || has_implicit_use(n.output(0)) || !n.bodies().empty()) return Kind::kFixed;
    *rank = g.rank_of(n.output(0));
    if (*rank != 3 && *rank != 4) return Kind::kFixed;
    const std::string& t = n.op_type();
    if (ir::is_default_domain(n.domain())) {
      if (t == "Transpose") {
        const std::vector<int64_t> perm = n.attr_ints("perm");
        if (g.rank_of(n.input(0)) != *rank) return Kind::kFixed;
        if (perm == to_channels_last_perm(*rank)) return Kind::kToCl;
        if (perm == to_channels_first_perm(*rank)) return Kind::kToCf;
        return Kind::kFixed;
      }
      if (t == "Conv" || t == "MaxPool" || t == "BatchNormalization") {
        if (g.rank_of(n.input(0)) != *rank) return Kind::kFixed;
        if (t == "Conv" && g.rank_of(n.input(1)) != *rank) return Kind::kFixed;
        return Kind::kLayoutOp;
      }
      if (t == "Concat") {
        for (const ir::Value* v : n.inputs())
          if (!v || g.rank_of(v) != *rank) return Kind::kFixed;
        return Kind::kConcat;
      }
      if (t == "Resize") return resize_is_layout_free(model, g, n, *rank) ? Kind::kResize : Kind::kFixed;
      if (t == "QuantizeLinear" || t == "DequantizeLinear") {
        if (!is_data_input(g, n.input(0), *rank)) return Kind::kFixed;
        for (size_t i = 1; i < n.inputs().size(); ++i)
          if (n.input(i) && !is_constant(n.input(i))) return Kind::kFixed;
        return n.has_attr("block_size") ? Kind::kFixed : Kind::kLinearQuant;
      }
      if (!is_unary_elementwise(t) && !is_broadcast_elementwise(t)) return Kind::kFixed;
    } else if (!dialect::is_integer_quantizer(n)) {
      return Kind::kFixed;
    }
    // Element-wise: every input is data of the output's rank, a constant of at most that rank, or a
    // single runtime value (Clip's bounds).
    for (const ir::Value* v : n.inputs()) {
      if (!v) continue;
      auto d = g.dims_of(v);
      if (!d || static_cast<int64_t>(d->size()) > *rank) return Kind::kFixed;
      if (is_constant(v) || static_cast<int64_t>(d->size()) == *rank) continue;
      int64_t numel = 1;
      for (int64_t x : *d) numel *= x;
      if (numel != 1) return Kind::kFixed;
    }
    return Kind::kElementwise;
  }

  // Nearest-neighbour Resize picks one input element per output element along each axis
  // independently: permuting the axes and their scales/sizes/roi gives the same values.
  static bool resize_is_layout_free(const ir::Model& model, const ir::Graph& g, const ir::Node& n, int64_t rank) {
    if (n.attr_string("mode", "nearest") != "nearest" || n.has_attr("axes")) return false;
    auto antialias = n.attr<int64_t>("antialias", 0);  // mistyped: not moved (the kernel reports it)
    if (!antialias.is_ok() || antialias.value() != 0) return false;
    if (!is_data_input(g, n.input(0), rank)) return false;
    for (size_t i = 1; i < n.inputs().size(); ++i)
      if (n.input(i) && !is_constant(n.input(i))) return false;
    (void)model;
    return true;
  }

  static size_t id(const ir::Value* v) { return static_cast<size_t>(v->id()); }

  bool wants_cl(const State& s, const ir::Graph& g, const ir::Use& u) const {
    if (u.input_index == ir::kImplicitInput) return false;
    auto k = s.kind.find(u.node);
    if (k == s.kind.end()) return false;
    if (k->second == Kind::kLayoutOp) return u.input_index == 0 || (u.node->op_type() == "Conv" && u.input_index == 1);
    if (k->second == Kind::kToCl) return true;  // vanishes on a channels-last input
    if (k->second == Kind::kToCf || k->second == Kind::kFixed) return false;
    if (!s.node_cl.at(u.node)) return false;
    return data_index(k->second, u.input_index) && is_data_input(g, u.node->input(static_cast<size_t>(u.input_index)), s.rank.at(u.node));
  }

  static bool data_index(Kind k, int index) { return k == Kind::kLinearQuant || k == Kind::kResize ? index == 0 : true; }

  bool layout_free(Kind k) const { return k == Kind::kElementwise || k == Kind::kLinearQuant || k == Kind::kConcat || k == Kind::kResize; }

  // The layout decision for the whole graph (State::node_cl, State::value_cl).
  Status assign(const ir::Graph& g, State& s) const {
    auto set_cl = [&](const ir::Node* n) {
      s.node_cl[n] = true;
      s.value_cl[static_cast<size_t>(n->output(0)->id())] = 1;
    };
    for (const ir::Node* n : s.order)
      if (s.kind[n] == Kind::kLayoutOp) set_cl(n);
    auto input_free = [&](const ir::Value* v) {
      return make_input_channels_last_ && v->is_graph_input() && !v->is_initializer();
    };
    for (int round = 0; round < 16; ++round) {
      bool changed = false;
      for (const ir::Node* n : s.order) {
        if (!layout_free(s.kind[n]) || s.node_cl[n] || s.pinned[id(n->output(0))]) continue;
        int cl = 0, cf = 0;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          const ir::Value* v = n->input(i);
          if (!data_index(s.kind[n], static_cast<int>(i)) || !is_data_input(g, v, s.rank[n])) continue;
          (s.value_cl[static_cast<size_t>(v->id())] ? cl : cf) += 1;
        }
        if (cl > 0 && cl >= cf) {
          set_cl(n);
          changed = true;
        }
      }
      for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
        const ir::Node* n = *it;
        if (s.node_cl[n]) continue;
        if (s.kind[n] == Kind::kToCf) {
          // Its result as channels-last is its input: take that whenever a reader wants channels-last.
          const ir::Value* in = n->input(0);
          if (s.value_cl[id(in)]) continue;
          bool any = false;
          for (const ir::Use& u : n->output(0)->uses()) any = any || wants_cl(s, g, u);
          if (any) {
            set_cl(n);
            s.pinned[id(in)] = 1;
            changed = true;
          }
          continue;
        }
        if (!layout_free(s.kind[n]) || s.pinned[id(n->output(0))]) continue;
        const ir::Value* out = n->output(0);
        if (out->is_graph_output() || out->uses().empty()) continue;
        bool all = true;
        for (const ir::Use& u : out->uses()) all = all && wants_cl(s, g, u);
        if (!all) continue;
        int cost = 0;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          const ir::Value* v = n->input(i);
          if (!data_index(s.kind[n], static_cast<int>(i)) || !is_data_input(g, v, s.rank[n])) continue;
          if (!s.value_cl[static_cast<size_t>(v->id())] && !input_free(v)) ++cost;
        }
        if (cost <= 1) {
          set_cl(n);
          changed = true;
        }
      }
      if (!changed) break;
    }
    if (make_input_channels_last_) {
      for (const ir::Value* v : g.runtime_inputs()) {
        int64_t r = g.rank_of(v);
        if (r != 3 && r != 4) continue;
        for (const ir::Use& u : v->uses())
          if (wants_cl(s, g, u) && !s.pinned[id(v)]) s.value_cl[id(v)] = 1;
      }
    }
    return Status::ok();
  }

  Result<bool> convert(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) {
    State s;
    QONNX_ASSIGN_OR_RETURN(s.order, exec::topological_order(g));
    bool any_layout_op = false;
    for (const ir::Node* n : s.order) {
      int64_t rank = -1;
      Kind k = classify(model, g, *n, &rank);
      s.kind[n] = k;
      s.rank[n] = rank;
      s.node_cl[n] = false;
      if (k == Kind::kLayoutOp && ir::is_default_domain(n->domain())) any_layout_op = true;
      if (k == Kind::kFixed && ir::is_default_domain(n->domain()) && g.rank_of(n->input(0)) != 2 &&
          (n->op_type() == "Conv" || n->op_type() == "MaxPool" || n->op_type() == "BatchNormalization"))
        ctx.warn(n, "left channels-first: needs one output and a known 3-D or 4-D input shape (run infer-shapes)");
    }
    if (!any_layout_op && !make_input_channels_last_) return false;
    s.value_cl.assign(g.value_count(), 0);
    s.pinned.assign(g.value_count(), 0);
    QONNX_RETURN_IF_ERROR(assign(g, s));

    // The channels-first dims of every tensor that becomes channels-last, before anything changes.
    std::map<std::string, Retype> cl_dims;
    std::vector<ir::Value*> cl_values;
    for (const ir::Node* n : s.order)
      if (s.node_cl[n]) cl_values.push_back(n->output(0));
    for (ir::Value* v : g.runtime_inputs())
      if (s.value_cl[static_cast<size_t>(v->id())]) cl_values.push_back(v);
    for (ir::Value* v : cl_values)
      if (auto d = g.dims_of(v)) {
        auto t = g.type_of(v);
        cl_dims[v->name()] = Retype{t ? t->dtype : DType::kFloat, transpose_dims(*d)};
      }

    Rewriter r(g, s, cl_dims);
    // Graph outputs keep their channels-first layout and name: the channels-last tensor is renamed
    // and a Transpose produces the output.
    for (ir::Value* out : std::vector<ir::Value*>(g.outputs()))
      if (s.value_cl[static_cast<size_t>(out->id())]) QONNX_RETURN_IF_ERROR(r.keep_output_channels_first(out, cl_dims));
    for (const ir::Node* cn : s.order) QONNX_RETURN_IF_ERROR(r.adapt_inputs(const_cast<ir::Node*>(cn)));
    // Transposes whose result is their input in the other layout vanish.
    for (const ir::Node* cn : s.order) {
      if (!vanishes(s, cn)) continue;
      ir::Node* t = const_cast<ir::Node*>(cn);
      ir::Value* in = t->input(0);
      QONNX_RETURN_IF_ERROR(pass::Rewriter(g, t).finish_with(in));
      ++transposes_removed_;
    }
    for (const ir::Node* cn : s.order)
      if (s.kind[cn] == Kind::kLayoutOp && ir::is_default_domain(cn->domain())) {
        QONNX_RETURN_IF_ERROR(r.to_channels_last_domain(const_cast<ir::Node*>(cn)));
        ++wrapped_;
      }
    // Declared types of the tensors whose layout changed.
    std::vector<std::string> retyped;
    for (const auto& entry : cl_dims)
      if (g.find_value(entry.first)) retyped.push_back(entry.first);
    std::vector<NewInfo> infos;
    for (const std::string& name : retyped) {
      const ir::Value* v = g.find_value(name);
      const Retype& rt = cl_dims[name];
      if (v->is_graph_input()) {
        // The caller now feeds channels-last data (--make-input-channels-last).
        for (size_t i = 0; i < g.inputs().size(); ++i)
          if (g.inputs()[i] == v) g.set_input_shape(i, rt.dims);
        ++inputs_made_channels_last_;
        continue;
      }
      infos.push_back(NewInfo{name, rt.dtype, rt.dims});
    }
    g.remove_value_infos(retyped);
    for (const NewInfo& vi : infos) g.add_value_info(vi.name, vi.dtype, vi.dims);
    for (const NewInfo& vi : r.new_infos) g.add_value_info(vi.name, vi.dtype, vi.dims);
    transposes_ += r.transposes;
    constants_transposed_ += r.constants;
    ctx.count("tensors-channels-last", static_cast<int64_t>(cl_dims.size()));
    return true;
  }

  static bool vanishes(const State& s, const ir::Node* n) {
    const Kind k = s.kind.at(n);
    return (k == Kind::kToCf && s.node_cl.at(n)) || (k == Kind::kToCl && s.value_cl[id(n->input(0))]);
  }

  static Dims transpose_dims(const Dims& cf) {
    auto perm = to_channels_last_perm(static_cast<int64_t>(cf.size()));
    Dims out(cf.size());
    for (size_t i = 0; i < cf.size(); ++i) out[i] = cf[static_cast<size_t>(perm[i])];
    return out;
  }

  // A value_info to add once the graph is rewritten.
  struct NewInfo {
    std::string name;
    DType dtype;
    Dims dims;
  };

  // Applies the decisions: Transposes, transposed constants, permuted attributes, the new domain.
  struct Rewriter {
    Rewriter(ir::Graph& graph, const State& state, const std::map<std::string, Retype>& retyped)
        : g(graph), s(state), cl_dims(retyped) {}
    ir::Graph& g;
    const State& s;
    const std::map<std::string, Retype>& cl_dims;  // channels-last dims of the tensors that change layout
    std::map<std::pair<const ir::Value*, bool>, ir::Value*> transposed;  // (value, to channels-last)
    std::vector<NewInfo> new_infos;
    int64_t transposes = 0, constants = 0;

    bool is_cl(const ir::Value* v) const { return v->id() < static_cast<int>(s.value_cl.size()) && s.value_cl[static_cast<size_t>(v->id())]; }

    // One Transpose per tensor and direction, right after the tensor's producer.
    Result<ir::Value*> transpose(ir::Value* v, bool to_cl) {
      auto key = std::make_pair(static_cast<const ir::Value*>(v), to_cl);
      if (auto it = transposed.find(key); it != transposed.end()) return it->second;
      // The dims as stored now: channels-last ones for a tensor that changes layout.
      std::optional<Dims> d = g.dims_of(v);
      if (is_cl(v)) {
        auto it = cl_dims.find(v->name());
        d = it != cl_dims.end() ? std::optional<Dims>(it->second.dims) : std::nullopt;
      }
      const int64_t rank = d ? static_cast<int64_t>(d->size()) : g.rank_of(v);
      const auto perm = to_cl ? to_channels_last_perm(rank) : to_channels_first_perm(rank);
      const ir::Node* before = v->producer() ? g.next_node(v->producer()) : (g.nodes().empty() ? nullptr : g.nodes().front().get());
      std::string name = g.unique_name(v->name() + (to_cl ? "_nhwc" : "_nchw"));
      QONNX_ASSIGN_OR_RETURN(ir::Node* t, g.insert_node(before, name, "Transpose", "", {v}, {name}));
      t->set_attr("perm", perm);
      if (d) {
        Dims out(d->size());
        for (size_t i = 0; i < d->size(); ++i) out[i] = (*d)[static_cast<size_t>(perm[i])];
        auto type = g.type_of(v);
        new_infos.push_back(NewInfo{name, type ? type->dtype : DType::kFloat, out});
      }
      ++transposes;
      transposed[key] = t->output(0);
      return t->output(0);
    }

    // A constant as a channels-last tensor of rank `rank` broadcasts: leading 1s, then transposed.
    Result<ir::Value*> constant_channels_last(ir::Value* v, int64_t rank) {
      auto key = std::make_pair(static_cast<const ir::Value*>(v), true);
      if (auto it = transposed.find(key); it != transposed.end()) return it->second;
      QONNX_ASSIGN_OR_RETURN(Tensor t, g.initializer_tensor(v));
      if (t.numel() == 1 || static_cast<int64_t>(t.rank()) > rank) return v;
      Dims full(static_cast<size_t>(rank) - t.rank(), 1);
      full.insert(full.end(), t.dims().begin(), t.dims().end());
      Tensor moved = transpose_tensor(t.reshaped(full), to_channels_last_perm(rank));
      QONNX_ASSIGN_OR_RETURN(ir::Value* out, g.add_initializer_tensor(g.unique_name(v->name() + "_nhwc"), moved));
      if (std::string dt = g.finn_datatype(v->name()); !dt.empty()) g.set_finn_datatype(out->name(), dt);
      ++constants;
      transposed[key] = out;
      return out;
    }

    // A per-axis list (Resize scales/sizes, and roi as two halves) in channels-last axis order.
    Result<ir::Value*> permuted_list(ir::Value* v, int64_t rank) {
      QONNX_ASSIGN_OR_RETURN(Tensor t, g.initializer_tensor(v));
      if (t.numel() == 0) return v;
      if (t.rank() != 1 || (t.numel() != rank && t.numel() != 2 * rank))
        return Status(Code::kInvalidModel, fmt::format("'{}' has {} values for a rank-{} Resize", v->name(), t.numel(), rank));
      auto perm = to_channels_last_perm(rank);
      Tensor out(t.dtype(), t.dims());
      const size_t elem = dtype_size(t.dtype());
      for (int64_t half = 0; half < t.numel() / rank; ++half)
        for (int64_t i = 0; i < rank; ++i)
          std::memcpy(static_cast<uint8_t*>(out.raw()) + static_cast<size_t>(half * rank + i) * elem,
                      static_cast<const uint8_t*>(t.raw()) + static_cast<size_t>(half * rank + perm[static_cast<size_t>(i)]) * elem, elem);
      ++constants;
      return g.add_initializer_tensor(g.unique_name(v->name() + "_nhwc"), out);
    }

    Status adapt_inputs(ir::Node* n) {
      if (vanishes(s, n)) return Status::ok();
      const Kind k = s.kind.at(n);
      const bool node_cl = s.node_cl.at(n);
      const int64_t rank = s.rank.at(n);
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        ir::Value* v = n->input(i);
        if (!v) continue;
        bool want_cl = false;
        if (k == Kind::kLayoutOp) {
          want_cl = i == 0 || (n->op_type() == "Conv" && i == 1);
        } else if (node_cl) {
          if (k == Kind::kResize && i > 0) {
            if (i >= 1 && !is_roi_or_scales(n, i)) continue;
            QONNX_ASSIGN_OR_RETURN(ir::Value* p, permuted_list(v, rank));
            g.set_node_input(n, i, p);
            continue;
          }
          if (k == Kind::kLinearQuant && i > 0) continue;
          want_cl = is_constant(v) || is_data_input(g, v, rank);
          if (!want_cl) continue;  // a single runtime value (Clip bound): any layout
        }
        if (want_cl && is_constant(v)) {
          QONNX_ASSIGN_OR_RETURN(ir::Value* c, constant_channels_last(v, k == Kind::kLayoutOp ? g.rank_of(v) : rank));
          g.set_node_input(n, i, c);
        } else if (want_cl != is_cl(v) && !is_constant(v)) {
          QONNX_ASSIGN_OR_RETURN(ir::Value* t, transpose(v, want_cl));
          g.set_node_input(n, i, t);
        }
      }
      if (!node_cl || k == Kind::kLayoutOp) return Status::ok();
      auto cl_axis = [&](int64_t axis) {
        if (axis < 0) axis += rank;
        return to_channels_first_perm(rank)[static_cast<size_t>(axis)];
      };
      if (k == Kind::kConcat) {
        QONNX_ASSIGN_OR_RETURN_CTX(const int64_t axis, n->attr<int64_t>("axis", 0), n->describe());
        n->set_attr("axis", cl_axis(axis));
      }
      if (k == Kind::kLinearQuant && g.rank_of(n->input(1)) == 1 && g.dims_of(n->input(1))->at(0) > 1) {
        QONNX_ASSIGN_OR_RETURN_CTX(const int64_t axis, n->attr<int64_t>("axis", 1), n->describe());
        n->set_attr("axis", cl_axis(axis));  // per-axis: the channel axis moved
      }
      return Status::ok();
    }

    // Resize's roi, scales and sizes (opset 11+: inputs 1..3; opset 10: scales at 1).
    static bool is_roi_or_scales(const ir::Node* n, size_t i) { return i >= 1 && i <= 3 && n->input(i); }

    Status to_channels_last_domain(ir::Node* n) {
      return g.move_node_to_domain(n, dialect::kChannelsLastDomain).status();
    }

    Status keep_output_channels_first(ir::Value* out, std::map<std::string, Retype>& renamed_dims) {
      const std::string name = out->name();
      auto dims = renamed_dims.find(name);
      const int64_t rank = dims != renamed_dims.end() ? static_cast<int64_t>(dims->second.dims.size()) : s.rank.at(out->producer());
      QONNX_RETURN_IF_ERROR(g.rename_value(out, g.unique_name(name + "_nhwc")));
      if (dims != renamed_dims.end()) {
        renamed_dims[out->name()] = dims->second;
        renamed_dims.erase(dims);
      }
      const ir::Node* before = out->producer() ? g.next_node(out->producer()) : nullptr;
      auto perm = to_channels_first_perm(rank);
      QONNX_ASSIGN_OR_RETURN(ir::Node* t, g.insert_node(before, name, "Transpose", "", {out}, {name}));
      t->set_attr("perm", perm);
      ir::Value* y = t->output(0);
      g.replace_all_uses(out, y);
      // Node readers keep reading the channels-last tensor (adapt_inputs gives CF readers this Transpose).
      for (const ir::Use& u : std::vector<ir::Use>(y->uses()))
        if (u.input_index != ir::kImplicitInput) g.set_node_input(u.node, static_cast<size_t>(u.input_index), out);
      transposed[std::make_pair(static_cast<const ir::Value*>(out), false)] = y;
      ++transposes;
      return Status::ok();
    }
  };

  pass::Option<bool> make_input_channels_last_{this, "make-input-channels-last", false,
                                               "1: graph inputs that feed channels-last ops become channels-last themselves "
                                               "(the caller feeds NHWC data)"};
  pass::Statistic wrapped_{this, "wrapped", "Conv/MaxPool/BatchNormalization moved to the channels_last domain"};
  pass::Statistic transposes_{this, "transposes", "Transpose nodes inserted where a reader needs the other layout"};
  pass::Statistic transposes_removed_{this, "transposes-removed", "Transpose nodes of the input that vanished"};
  pass::Statistic constants_transposed_{this, "constants-transposed", "constants stored channels-last instead of a Transpose"};
  pass::Statistic inputs_made_channels_last_{this, "inputs-made-channels-last", "graph inputs now fed channels-last"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_to_channels_last() { return std::make_unique<ToChannelsLast>(); }

}  // namespace qonnx::passes
