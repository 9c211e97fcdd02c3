// infer-datatypes: qonnx's InferDataTypes. Every node's outputs get a finn_datatype annotation from
// its inputs' datatypes and its quantizer parameters (qonnx/transformation/infer_datatypes.py and the
// custom ops' infer_node_datatype), in graph order:
//   Quant with constant scale/zero point/scalar integer bit width: INTk/UINTk/BIPOLAR/BINARY at unit
//   scale and zero point 0, SCALEDINT<k> at another scale, FLOAT32 otherwise (non-zero zero point
//   included); BipolarQuant: BIPOLAR at unit scale; MultiThreshold: out_dtype; Trunc: FLOAT32;
//   QuantAvgPool2d: INT/UINT<obits> (obits 2..32, as qonnx);
//   MatMul/Gemm/Conv/Add/Sub/Mul: INT32/UINT32 on integers, SCALEDINT<32> on scaled integers, FLOAT32
//   with a float input; Reshape/Transpose/... keep their input's type; QuantizeLinear: its output
//   container (INT8, UINT8, ...), DequantizeLinear: SCALEDINT<container bits>.
// scaled-int=0 (qonnx's default) turns every SCALEDINT into FLOAT32. clip-aware=1 (beyond qonnx): a
// Clip with constant bounds on an integer tensor narrows it to the smallest type holding the bounds, and
// DequantizeLinear keeps that width, so a 4-bit QCDQ model counts 4 bits, not 8.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"
#include "qonnx/quant/avg_pool.h"
#include "passes/passes.h"

namespace qonnx::passes {
namespace {

using ir::FinnDataType;

// An initializer's values as doubles; nullopt when the value is not an initializer.
std::optional<std::vector<double>> initializer_values(const ir::Graph& g, const ir::Value* v) {
  if (!v || !v->is_initializer()) return std::nullopt;
  auto t = g.initializer_tensor(v);
  if (!t.is_ok() || t->dtype() == DType::kString) return std::nullopt;
  std::vector<double> out(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) out[static_cast<size_t>(i)] = exec::element_as_double(t.value(), i);
  return out;
}

// A rank-0 integral initializer (qonnx asserts ndim == 0 on bit widths and float formats).
std::optional<int64_t> scalar_integer(const ir::Graph& g, const ir::Value* v) {
  if (!v || !v->is_initializer() || g.rank_of(v) != 0) return std::nullopt;
  auto values = initializer_values(g, v);
  if (!values || values->size() != 1 || (*values)[0] != std::floor((*values)[0]) || std::abs((*values)[0]) > 1e9)
    return std::nullopt;
  return static_cast<int64_t>((*values)[0]);
}

bool all_equal(const std::optional<std::vector<double>>& values, double x) {
  if (!values) return false;
  for (double v : *values)
    if (v != x) return false;
  return true;
}

// The ONNX element type of a value: declared type, else the initializer's.
int32_t element_type(const ir::Graph& g, const ir::Value* v) {
  if (!v) return 0;
  if (auto t = g.type_of(v); t && t->dtype != DType::kUndefined) return static_cast<int32_t>(t->dtype);
  if (const ir::Initializer* init = g.initializer(v)) return static_cast<int32_t>(init->dtype());
  return 0;
}

// Bits and signedness of the integer containers QuantizeLinear/DequantizeLinear use.
std::optional<std::pair<int, bool>> container_bits(int32_t elem_type) {
  switch (static_cast<DType>(elem_type)) {
    case DType::kInt8: return std::make_pair(8, true);
    case DType::kInt16: return std::make_pair(16, true);
    case DType::kInt32: return std::make_pair(32, true);
    case DType::kInt64: return std::make_pair(64, true);
    case DType::kUInt8: return std::make_pair(8, false);
    case DType::kUInt16: return std::make_pair(16, false);
    case DType::kUInt32: return std::make_pair(32, false);
    case DType::kUInt64: return std::make_pair(64, false);
    default: return std::nullopt;
  }
}

class InferDatatypes : public pass::GraphPass {
 public:
  // Main graph only: qonnx's InferDataTypes annotates the main graph only; body annotations would be new output.
  InferDatatypes() : GraphPass(Bodies::kSkip) {}
  std::string name() const override { return "infer-datatypes"; }
  std::string summary() const override {
    return "qonnx's InferDataTypes: finn_datatype annotations on every node output (INTk, BIPOLAR, SCALEDINT<k>, "
           "FLOAT32, ...) from quantizer parameters and input datatypes";
  }
  Result<bool> run_on_graph(ir::Model& model, ir::Graph& g, pass::PassContext& ctx) override {
    bool changed = false;
    for (const auto& n : g.nodes()) {
      std::vector<std::string> before;
      for (const ir::Value* v : n->outputs()) before.push_back(v ? g.finn_datatype(v->name()) : "");
      if (Status st = infer_node(g, *n); !st.is_ok()) return std::move(st).with_context(n->describe());
      if (!*scaled_int_)
        for (const ir::Value* v : n->outputs())
          if (v && datatype_of(g, v).kind == FinnDataType::Kind::kScaledInt) set(g, v, ir::float32_datatype());
      for (size_t k = 0; k < n->outputs().size(); ++k)
        if (n->output(k) && g.finn_datatype(n->output(k)->name()) != before[k]) changed = true;
    }
    return changed;
  }

 private:
  // qonnx's get_tensor_datatype; clip-aware, an unannotated integer tensor is its container type (an int8
  // QCDQ weight is INT8, so a Clip after it can narrow it).
  FinnDataType datatype_of(const ir::Graph& g, const ir::Value* v) const {
    if (*clip_aware_ && v && g.finn_datatype(v->name()).empty())
      if (auto c = container_bits(element_type(g, v))) return ir::integer_datatype(c->first, c->second);
    return ir::tensor_datatype(g, v);
  }
  void set(ir::Graph& g, const ir::Value* v, const FinnDataType& dt) {
    if (v && g.finn_datatype(v->name()) != dt.name) {
      g.set_finn_datatype(v->name(), dt.name);
      ++annotated_;
    }
  }
  // set, as infer_node's answer.
  Status annotate(ir::Graph& g, const ir::Value* v, const FinnDataType& dt) {
    set(g, v, dt);
    return Status::ok();
  }

  static FinnDataType mac_result(const std::vector<FinnDataType>& in, const FinnDataType& original, bool negation) {
    bool maybe_signed = negation, all_integer = true, all_scaled = true, any_float = false;
    for (const auto& t : in) {
      maybe_signed |= t.is_signed;
      all_integer &= t.is_integer();
      all_scaled &= t.is_scaled_int();
      any_float |= t.is_float();
    }
    if (all_integer) return ir::integer_datatype(32, maybe_signed);
    if (all_scaled) return ir::scaled_int_datatype(32);
    if (any_float) return ir::float32_datatype();
    return original;
  }

  Result<FinnDataType> quant_output(const ir::Graph& g, const ir::Node& n) {
    auto scale = initializer_values(g, n.input(1));
    auto zeropt = initializer_values(g, n.input(2));
    auto bits = scalar_integer(g, n.input(3));
    if (!scale || !zeropt || !bits || *bits < 1 || !all_equal(zeropt, 0.0)) return ir::float32_datatype();
    if (!all_equal(scale, 1.0)) return ir::scaled_int_datatype(static_cast<int>(*bits));
    QONNX_ASSIGN_OR_RETURN(const bool is_signed, n.attr<bool>("signed", true));
    if (*bits == 1 && is_signed) return *ir::parse_finn_datatype("BIPOLAR");
    return ir::integer_datatype(static_cast<int>(*bits), is_signed);
  }

  FinnDataType float_quant_output(const ir::Graph& g, const ir::Node& n) {
    auto exponent = scalar_integer(g, n.input(2)), mantissa = scalar_integer(g, n.input(3)),
         bias = scalar_integer(g, n.input(4));
    const bool max_scalar = n.input(5) && n.input(5)->is_initializer() && g.rank_of(n.input(5)) == 0;
    if (!exponent || !mantissa || !bias || !max_scalar || !all_equal(initializer_values(g, n.input(1)), 1.0))
      return ir::float32_datatype();
    auto dt = ir::parse_finn_datatype(fmt::format("FLOAT<{},{},{}>", *exponent, *mantissa, *bias));
    return dt ? *dt : ir::float32_datatype();
  }

  static Result<FinnDataType> multithreshold_output(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(const double scale, n.attr<float>("out_scale", 1.0f));
    QONNX_ASSIGN_OR_RETURN(const double bias, n.attr<float>("out_bias", 0.0f));
    if (scale != std::floor(scale) || bias != std::floor(bias)) return ir::float32_datatype();
    auto dt = ir::parse_finn_datatype(n.attr_string("out_dtype", ""));
    return dt ? *dt : ir::float32_datatype();
  }

  // Clip bounds: inputs 1 and 2 (opset >= 11) or the min/max attributes.
  static Result<std::optional<std::pair<double, double>>> clip_bounds(const ir::Graph& g, const ir::Node& n) {
    double lo = -INFINITY, hi = INFINITY;
    if (n.has_attr("min") || n.has_attr("max")) {
      QONNX_ASSIGN_OR_RETURN(lo, n.attr<float>("min", -INFINITY));
      QONNX_ASSIGN_OR_RETURN(hi, n.attr<float>("max", INFINITY));
    } else {
      auto l = initializer_values(g, n.input(1)), h = initializer_values(g, n.input(2));
      if ((n.input(1) && (!l || l->size() != 1)) || (n.input(2) && (!h || h->size() != 1)))
        return std::optional<std::pair<double, double>>();
      if (l) lo = (*l)[0];
      if (h) hi = (*h)[0];
    }
    if (!std::isfinite(lo) || !std::isfinite(hi)) return std::optional<std::pair<double, double>>();
    return std::optional<std::pair<double, double>>(std::make_pair(std::ceil(lo), std::floor(hi)));
  }

  Status infer_node(ir::Graph& g, const ir::Node& n) {
    static const std::set<std::string> kIdentity = {
        "Reshape", "Transpose", "Flatten", "Slice", "Gather", "GatherElements", "GatherND", "Identity", "Expand",
        "MaxPool", "GlobalMaxPool", "Scatter", "ScatterElements", "ScatterND", "Squeeze", "Unsqueeze", "Tile", "Pad",
        "Concat", "Clip"};
    static const std::set<std::string> kMacLike = {"MatMul", "Gemm", "Conv", "Add", "Sub", "Mul"};
    const ir::Value* out = n.output(0);
    switch (dialect::classify(n)) {
      case dialect::Op::kQuant: {
        QONNX_ASSIGN_OR_RETURN(const FinnDataType dt, quant_output(g, n));
        return annotate(g, out, dt);
      }
      case dialect::Op::kBipolarQuant:
        return annotate(g, out, all_equal(initializer_values(g, n.input(1)), 1.0) ? *ir::parse_finn_datatype("BIPOLAR")
                                                                             : ir::float32_datatype());
      case dialect::Op::kTrunc: return annotate(g, out, ir::float32_datatype());
      case dialect::Op::kFloatQuant: return annotate(g, out, float_quant_output(g, n));
      case dialect::Op::kMultiThreshold: {
        QONNX_ASSIGN_OR_RETURN(const FinnDataType dt, multithreshold_output(n));
        return annotate(g, out, dt);
      }
      case dialect::Op::kChannelsLastMaxPool: return annotate(g, out, datatype_of(g, n.input(0)));
      case dialect::Op::kQuantAvgPool2d: {
        QONNX_ASSIGN_OR_RETURN_CTX(const quant::AvgPoolParams p, quant::read_avg_pool_params(n), n.describe());
        if (p.obits < 2 || p.obits > 32)
          return Status(Code::kUnsupported, fmt::format("{}: obits {} has no datatype (qonnx: 2..32)", n.describe(), p.obits));
        return annotate(g, out, ir::integer_datatype(static_cast<int>(p.obits), p.is_signed));
      }
      default: break;
    }
    const std::string& op = n.op_type();
    const bool standard = ir::is_default_domain(n.domain());
    if (standard && op == "Sign") return annotate(g, out, *ir::parse_finn_datatype("BIPOLAR"));
    if (standard && kMacLike.count(op)) {
      std::vector<FinnDataType> in;
      for (const ir::Value* v : n.inputs()) in.push_back(datatype_of(g, v));
      return annotate(g, out, mac_result(in, datatype_of(g, out), op == "Sub"));
    }
    if (standard && (op == "Resize" || op == "Upsample")) {
      if (n.attr_string("mode", "nearest") == "nearest") return annotate(g, out, datatype_of(g, n.input(0)));
      return Status::ok();
    }
    if (standard && op == "Clip" && *clip_aware_) {
      FinnDataType in = datatype_of(g, n.input(0));
      QONNX_ASSIGN_OR_RETURN(const auto bounds, clip_bounds(g, n));
      if (in.kind == FinnDataType::Kind::kInteger && bounds && bounds->first <= bounds->second) {
        FinnDataType narrowed = ir::smallest_integer_datatype(bounds->first, bounds->second);
        return annotate(g, out, narrowed.bits < in.bits ? narrowed : in);
      }
    }
    if (standard && kIdentity.count(op)) return annotate(g, out, datatype_of(g, n.input(0)));
    if (standard && op == "QuantizeLinear") {
      if (auto c = container_bits(element_type(g, out))) return annotate(g, out, ir::integer_datatype(c->first, c->second));
    }
    if (standard && op == "DequantizeLinear") {
      if (auto c = container_bits(element_type(g, n.input(0)))) {
        int bits = c->first;
        FinnDataType in = datatype_of(g, n.input(0));
        if (*clip_aware_ && in.kind == FinnDataType::Kind::kInteger && in.bits < bits) bits = in.bits;
        return annotate(g, out, ir::scaled_int_datatype(bits));
      }
    }
    // Anything else produces float32, unless an output already has another type.
    for (const ir::Value* v : n.outputs())
      if (v) set(g, v, datatype_of(g, v));
    return Status::ok();
  }

  pass::Option<bool> scaled_int_{this, "scaled-int", false, "1: infer SCALEDINT<k> types (qonnx's allow_scaledint_dtypes)"};
  pass::Option<bool> clip_aware_{this, "clip-aware", false,
                                 "1: a Clip with constant bounds narrows an integer type (QCDQ: the true bit width)"};
  pass::Statistic annotated_{this, "annotated", "finn_datatype annotations set or changed"};
};

}  // namespace

std::unique_ptr<pass::Pass> make_infer_datatypes() { return std::make_unique<InferDatatypes>(); }

}  // namespace qonnx::passes
