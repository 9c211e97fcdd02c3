#include "qonnx/analysis/inference_cost.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "analysis/html_chart.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/ir/finn_datatype.h"

namespace qonnx::analysis {

std::string cost_preprocess_pipeline(bool clip_aware) {
  const std::string datatypes = clip_aware ? "infer-datatypes{scaled-int=1,clip-aware=1}" : "infer-datatypes{scaled-int=1}";
  // qonnx folds every constant, however large: a weight left behind a Quant would cost no memory.
  return "qonnx-domains,freeze-initializer-inputs,infer-shapes,unique-parameters," + datatypes +
         ",fold-constants{qdq=1,shapes=1,max-bytes=68719476736},infer-shapes,cleanup{merge-constants=0}," + datatypes +
         ",readable-names";
}

namespace {

// Ops qonnx counts as free (data movement, elementwise, quantizers).
bool zero_cost(const std::string& op) {
  static const std::set<std::string> kOps = {
      "MaxPool", "AveragePool", dialect::kQuantOp, "QuantizeLinear", "DequantizeLinear", "Reshape", "Concat", "Transpose", "Div",
      "Mul", "Add", "Sub", "BatchNormalization", "Relu", "Elu", "Selu", "Sigmoid", "Identity", "Flatten", "Pad", "Clip",
      dialect::kTruncOp};
  return kOps.count(op) > 0;
}

class NodeCoster {
 public:
  NodeCoster(const ir::Graph& g, const CostOptions& options, std::vector<std::string>& warnings)
      : g_(g), options_(options), warnings_(warnings) {}

  // The node's cost table, nullopt when the op is not costed here.
  Result<std::optional<NodeCost>> cost(const ir::Node& n) {
    const std::string& op = n.op_type();
    const bool extended = !options_.qonnx_ops_only;
    if (op == "Conv") return some(n, conv(n));
    if (op == "MatMul" || op == "Gemm") return some(n, matmul(n));
    if (op == "Upsample") return some(n, upsample(n));
    if (extended && op == "ConvTranspose") return some(n, conv_transpose(n));
    if (extended && op == "GlobalAveragePool") return some(n, global_average_pool(n));
    if (extended && op == "Resize") return some(n, upsample(n));
    if (extended && op == dialect::kMultiThresholdOp) return some(n, multithreshold(n));
    return std::optional<NodeCost>();
  }

 private:
  Result<std::optional<NodeCost>> some(const ir::Node& n, Result<NodeCost> c) {
    if (!c.is_ok()) return std::move(c).status().with_context(n.describe());
    c->name = n.name();
    c->op_type = n.op_type();
    return std::optional<NodeCost>(std::move(c).value());
  }

  // qonnx's get_tensor_shape: initializer dims, else the declared shape. A symbolic dimension counts as
  // 1 (qonnx reads its dim_value, 0, and costs the node at nothing).
  Result<Dims> shape(const ir::Node& n, const ir::Value* v, const char* what) {
    if (!v) return Status(Code::kInvalidModel, fmt::format("{} is missing", what));
    if (const ir::Initializer* init = g_.initializer(v)) return Dims(init->proto->dims().begin(), init->proto->dims().end());
    auto t = g_.type_of(v);
    if (!t || !t->has_shape)
      return Status(Code::kUnsupported, fmt::format("{} '{}' has no known shape (the cost needs every shape)", what, v->name()));
    Dims dims = t->dims;
    for (auto& d : dims)
      if (d < 0) {
        warnings_.push_back(fmt::format("{}: symbolic dimension of '{}' counted as 1", n.describe(), v->name()));
        d = 1;
      }
    return dims;
  }

  static int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
    int64_t p = 1;
    for (size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
    return p;
  }

  // np.count_nonzero(w) / w.size for an initializer, 1.0 for anything else.
  double density(const ir::Value* w) {
    if (!w || !w->is_initializer()) return 1.0;
    auto t = g_.initializer_tensor(w);
    if (!t.is_ok() || t->numel() == 0 || t->dtype() == DType::kString) return 1.0;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < t->numel(); ++i) nonzero += exec::element_as_double(t.value(), i) != 0.0;
    return static_cast<double>(nonzero) / static_cast<double>(t->numel());
  }

  // qonnx's discount_sparsity: MACs and weight memory scale by the weight's non-zero fraction.
  void discount(const ir::Value* weight, double& macs, double& w_mem) {
    if (!options_.discount_sparsity) return;
    const double d = density(weight);
    macs *= d;
    w_mem *= d;
  }

  NodeCost table(const ir::Node& n, const ir::Value* in, const ir::Value* w, double macs, std::optional<double> w_mem,
                 double o_mem) {
    NodeCost c;
    const ir::FinnDataType idt = ir::tensor_datatype(g_, in), wdt = ir::tensor_datatype(g_, w),
                           odt = ir::tensor_datatype(g_, n.output(0));
    // Ops without a weight pair the input type with itself (qonnx's Upsample).
    const ir::FinnDataType& pair = w ? wdt : idt;
    c.costs.emplace_back(fmt::format("op_mac_{}_{}", idt.name, pair.name), macs);
    if (w_mem) c.costs.emplace_back(fmt::format("mem_w_{}", wdt.name), *w_mem);
    c.costs.emplace_back(fmt::format("mem_o_{}", odt.name), o_mem);
    c.input_datatype = idt.name;
    c.input_bits = idt.bits;
    if (w_mem) {
      c.weight_datatype = wdt.name;
      c.weight_bits = wdt.bits;
    }
    c.output_datatype = odt.name;
    c.output_bits = odt.bits;
    return c;
  }

  Result<NodeCost> conv(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims w, shape(n, n.input(1), "weight"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    if (i.size() < 2 || o.size() < 2 || w.size() < 2) return Status(Code::kInvalidModel, "Conv tensors need rank >= 2");
    const bool channels_last = n.domain() == dialect::kChannelsLastDomain;
    std::vector<int64_t> k = n.attr_ints("kernel_shape");
    if (k.empty()) k.assign(w.begin() + (channels_last ? 1 : 2), w.end() - (channels_last ? 1 : 0));
    QONNX_ASSIGN_OR_RETURN(const int64_t group, n.attr<int64_t>("group", 1));
    const int64_t ifm = channels_last ? i.back() : i[1], ofm = channels_last ? o.back() : o[1];
    const int64_t pixels = channels_last ? product(o, 1, o.size() - 1) : product(o, 2);
    if (ofm != w[0]) return Status(Code::kInvalidModel, fmt::format("output channels {} differ from the weight's {}", ofm, w[0]));
    if (group <= 0 || ofm % group != 0) return Status(Code::kInvalidModel, fmt::format("invalid group {}", group));
    const int64_t kprod = std::accumulate(k.begin(), k.end(), int64_t{1}, std::multiplies<>());
    double macs = static_cast<double>(i[0] * (ofm / group) * ifm * kprod * pixels);
    double w_mem = static_cast<double>(product(w));
    discount(n.input(1), macs, w_mem);
    return table(n, n.input(0), n.input(1), macs, w_mem, static_cast<double>(product(o)));
  }

  // MatMul and Gemm: the common dimension times the output size. The constant side is the weight;
  // with both sides computed there is no weight memory.
  Result<NodeCost> matmul(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims w, shape(n, n.input(1), "weight"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    if (n.op_type() == "Gemm") {
      if (i.size() != 2 || w.size() != 2) return Status(Code::kInvalidModel, "Gemm operands must be 2-D");
      QONNX_ASSIGN_OR_RETURN(const int64_t trans_a, n.attr<int64_t>("transA", 0));
      QONNX_ASSIGN_OR_RETURN(const int64_t trans_b, n.attr<int64_t>("transB", 0));
      if (trans_a == 1) std::reverse(i.begin(), i.end());
      if (trans_b == 1) std::reverse(w.begin(), w.end());
    }
    if (i.empty()) return Status(Code::kInvalidModel, "MatMul input has rank 0");
    double macs = static_cast<double>(i.back() * product(o));
    const bool const0 = n.input(0)->is_initializer(), const1 = n.input(1)->is_initializer();
    // qonnx fails on two constant operands (folding removes such nodes); the second counts as the weight.
    const ir::Value* weight = const0 && !const1 ? n.input(0) : const1 ? n.input(1) : nullptr;
    double w_mem = weight == n.input(0) ? static_cast<double>(product(i)) : weight ? static_cast<double>(product(w)) : 0.0;
    if (weight) discount(weight, macs, w_mem);
    return table(n, n.input(0), n.input(1), macs, w_mem, static_cast<double>(product(o)));
  }

  Result<NodeCost> conv_transpose(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims w, shape(n, n.input(1), "weight"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    if (i.size() < 2 || w.size() < 2) return Status(Code::kInvalidModel, "ConvTranspose tensors need rank >= 2");
    // Every input pixel of every input channel meets the C_out/group x kernel weights of its group.
    double macs = static_cast<double>(i[0] * i[1] * product(i, 2) * product(w, 1));
    double w_mem = static_cast<double>(product(w));
    discount(n.input(1), macs, w_mem);
    return table(n, n.input(0), n.input(1), macs, w_mem, static_cast<double>(product(o)));
  }

  Result<NodeCost> global_average_pool(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    // One accumulation per input element.
    return table(n, n.input(0), nullptr, static_cast<double>(product(i)), std::nullopt, static_cast<double>(product(o)));
  }

  // Upsample (qonnx) and Resize: nearest copies, linear interpolates with 2 MACs per scaled dimension and
  // output pixel, cubic with 4.
  Result<NodeCost> upsample(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    if (i.size() < 2) return Status(Code::kInvalidModel, "input needs rank >= 2");
    const std::string mode = n.attr_string("mode", "nearest");
    int64_t scaled_dims = 0;
    if (mode != "nearest") {
      // Scale factors: Upsample input 1, Resize input 2 (input 1 at opset 10), else output / input sizes.
      const ir::Value* scales = n.op_type() == "Upsample" || n.inputs().size() == 2 ? n.input(1) : n.input(2);
      std::optional<Tensor> values;
      if (scales && scales->is_initializer()) {
        if (auto t = g_.initializer_tensor(scales); t.is_ok() && t->numel() > 0) values = t.value();
      }
      if (values) {
        for (int64_t k = 0; k < values->numel(); ++k) scaled_dims += exec::element_as_double(*values, k) > 1.0;
      } else if (o.size() == i.size()) {
        for (size_t d = 0; d < o.size(); ++d) scaled_dims += o[d] > i[d];
      } else {
        return Status(Code::kUnsupported, "the scales are not constant");
      }
    }
    int64_t per_dim = 0;
    if (mode == "linear") per_dim = 2;
    else if (mode == "cubic") per_dim = 4;
    else if (mode != "nearest") return Status(Code::kUnsupported, fmt::format("{} mode '{}' has no cost model", n.op_type(), mode));
    const double macs = static_cast<double>(per_dim * scaled_dims * product(o, 2) * i[1] * i[0]);
    return table(n, n.input(0), nullptr, macs, std::nullopt, static_cast<double>(product(o)));
  }

  // Comparisons against every threshold of the element's channel, counted as MACs; thresholds are weights.
  Result<NodeCost> multithreshold(const ir::Node& n) {
    QONNX_ASSIGN_OR_RETURN(Dims i, shape(n, n.input(0), "input"));
    QONNX_ASSIGN_OR_RETURN(Dims t, shape(n, n.input(1), "thresholds"));
    QONNX_ASSIGN_OR_RETURN(Dims o, shape(n, n.output(0), "output"));
    const int64_t steps = t.empty() ? 1 : t.back();
    return table(n, n.input(0), n.input(1), static_cast<double>(product(i) * steps), static_cast<double>(product(t)),
                 static_cast<double>(product(o)));
  }

  const ir::Graph& g_;
  const CostOptions& options_;
  std::vector<std::string>& warnings_;
};

// qonnx's aggregate_dict_keys: sums per key over tables, keys in first-appearance order.
void accumulate(CostTable& into, const CostTable& add) {
  for (const auto& entry : add) {
    const std::string& key = entry.first;
    auto it = std::find_if(into.begin(), into.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == into.end()) into.emplace_back(key, entry.second);
    else it->second += entry.second;
  }
}

int datatype_bits(const std::string& name) {
  auto dt = ir::parse_finn_datatype(name);
  return dt ? dt->bits : 32;
}

}  // namespace

Result<InferenceCost> inference_cost(const ir::Model& model, const CostOptions& options) {
  InferenceCost out;
  out.discount_sparsity = options.discount_sparsity;
  const ir::Graph& g = model.graph();
  NodeCoster coster(g, options, out.warnings);
  for (const auto& n : g.nodes()) {
    QONNX_ASSIGN_OR_RETURN(std::optional<NodeCost> c, coster.cost(*n));
    if (!c) {
      // qonnx lists BipolarQuant, FloatQuant and IntQuant as unsupported; like Quant they cost nothing.
      const bool free_quantizer = !options.qonnx_ops_only && dialect::is_quantizer(*n);
      if (!zero_cost(n->op_type()) && !free_quantizer) out.unsupported.insert(n->op_type());
      continue;
    }
    accumulate(out.total, c->costs);
    auto it = std::find_if(out.optypes.begin(), out.optypes.end(), [&](const auto& p) { return p.first == c->op_type; });
    if (it == out.optypes.end()) out.optypes.emplace_back(c->op_type, c->costs);
    else accumulate(it->second, c->costs);
    out.nodes.push_back(std::move(*c));
  }
  return out;
}

CostTotals cost_totals(const CostTable& table) {
  CostTotals t;
  for (const auto& [key, v] : table) {
    // "op_mac_<input>_<weight>", "mem_w_<type>", "mem_o_<type>"
    if (key.rfind("op_mac_", 0) == 0) {
      const std::string types = key.substr(7);
      const size_t sep = types.find('_');
      t.bops += static_cast<double>(datatype_bits(types.substr(0, sep)) * datatype_bits(types.substr(sep + 1))) * v;
      t.macs += v;
    } else if (key.rfind("mem_w_", 0) == 0) {
      t.mem_w_bits += datatype_bits(key.substr(6)) * v;
      t.mem_w_elems += v;
    } else if (key.rfind("mem_o_", 0) == 0) {
      t.mem_o_bits += datatype_bits(key.substr(6)) * v;
      t.mem_o_elems += v;
    }
  }
  return t;
}

std::string python_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: positional for 1e-4 <= |v| < 1e16.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string text;
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      if (digits.size() <= static_cast<size_t>(exponent) + 1) text = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
      else text = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    } else {
      text = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
  } else {
    text = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return (negative ? "-" : "") + text;
}

namespace {

// A JSON value as qonnx's dict holds it: number (a Python float), integer, bool, string or object
// (keys sorted when printed).
struct PyValue {
  enum class Kind { kNumber, kInteger, kBool, kString, kObject } kind = Kind::kNumber;
  double number = 0;
  int64_t integer = 0;
  bool boolean = false;
  std::string text;
  std::map<std::string, PyValue> object;  // sorted: json.dump(sort_keys=True)
};

PyValue of_kind(PyValue::Kind kind) {
  PyValue v;
  v.kind = kind;
  return v;
}
PyValue number(double x) {
  PyValue v = of_kind(PyValue::Kind::kNumber);
  v.number = x;
  return v;
}
PyValue integer(int64_t x) {
  PyValue v = of_kind(PyValue::Kind::kInteger);
  v.integer = x;
  return v;
}
PyValue boolean(bool x) {
  PyValue v = of_kind(PyValue::Kind::kBool);
  v.boolean = x;
  return v;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += static_cast<char>(c);  // UTF-8 passes through (valid JSON; Python would escape it)
  }
  return out + "\"";
}

void print(const PyValue& v, int indent, std::string& out) {
  switch (v.kind) {
    case PyValue::Kind::kNumber: out += python_float(v.number); return;
    case PyValue::Kind::kInteger: out += std::to_string(v.integer); return;
    case PyValue::Kind::kBool: out += v.boolean ? "true" : "false"; return;
    case PyValue::Kind::kString: out += json_string(v.text); return;
    case PyValue::Kind::kObject: break;
  }
  if (v.object.empty()) {
    out += "{}";
    return;
  }
  out += "{\n";
  bool first = true;
  for (const auto& [k, child] : v.object) {
    if (!first) out += ",\n";
    first = false;
    out += std::string(static_cast<size_t>(indent + 2), ' ') + json_string(k) + ": ";
    print(child, indent + 2, out);
  }
  out += "\n" + std::string(static_cast<size_t>(indent), ' ') + "}";
}

// A table with qonnx's total_* entries added (assign_mem_bits_and_elems, total_bops, total_macs).
PyValue with_totals(const CostTable& table) {
  PyValue o = of_kind(PyValue::Kind::kObject);
  for (const auto& [k, v] : table) o.object[k] = number(v);
  const CostTotals t = cost_totals(table);
  o.object["total_bops"] = number(t.bops);
  o.object["total_macs"] = number(t.macs);
  o.object["total_mem_w_bits"] = number(t.mem_w_bits);
  o.object["total_mem_w_elems"] = number(t.mem_w_elems);
  o.object["total_mem_o_bits"] = number(t.mem_o_bits);
  o.object["total_mem_o_elems"] = number(t.mem_o_elems);
  return o;
}

}  // namespace

std::string cost_json(const InferenceCost& cost, bool breakdown, bool flat) {
  PyValue total = with_totals(cost.total);
  // str() of a Python set; sorted here (Python's order depends on string hashing).
  std::string unsupported = "set()";
  if (!cost.unsupported.empty()) {
    std::vector<std::string> quoted;
    for (const auto& op : cost.unsupported) quoted.push_back("'" + op + "'");
    unsupported = fmt::format("{{{}}}", fmt::join(quoted, ", "));
  }
  PyValue& text = total.object["unsupported"] = of_kind(PyValue::Kind::kString);
  text.text = unsupported;
  total.object["discount_sparsity"] = boolean(cost.discount_sparsity);
  PyValue root = of_kind(PyValue::Kind::kObject);
  if (flat) {
    root = total;
  } else {
    root.object["total_cost"] = total;
    if (breakdown) {
      PyValue optypes = of_kind(PyValue::Kind::kObject), nodes = of_kind(PyValue::Kind::kObject);
      for (const auto& [op, table] : cost.optypes) optypes.object[op] = with_totals(table);
      for (const auto& n : cost.nodes) nodes.object[n.name] = with_totals(n.costs);
      root.object["optype_cost"] = optypes;
      root.object["node_cost"] = nodes;
      PyValue accumulators = of_kind(PyValue::Kind::kObject);
      int64_t total_bits = 0;
      for (const Accumulator& a : cost.accumulators) {
        PyValue& entry = accumulators.object[a.node] = of_kind(PyValue::Kind::kObject);
        entry.object["min"] = integer(a.min);
        entry.object["max"] = integer(a.max);
        entry.object["signed_bits"] = integer(a.signed_bits);
        entry.object["unsigned_bits"] = integer(a.unsigned_bits);
        entry.object["bits"] = integer(accumulator_bits(a));
        entry.object["attained"] = boolean(a.attained);
        total_bits += accumulator_bits(a);
      }
      root.object["node_accumulator"] = accumulators;
      root.object["total_accumulator_bits"] = integer(total_bits);
    }
  }
  std::string out;
  print(root, 0, out);
  return out + "\n";
}

std::string cost_html(const InferenceCost& cost, const std::string& title) {
  using html::human;
  const CostTotals t = cost_totals(cost.total);
  std::map<std::string, const Accumulator*> accumulator;
  int64_t accumulator_total = 0;
  int widest = 0;
  for (const Accumulator& a : cost.accumulators) {
    accumulator[a.node] = &a;
    accumulator_total += accumulator_bits(a);
    widest = std::max(widest, accumulator_bits(a));
  }
  std::string page = html::page_begin(title + " - inference cost", "Inference cost: " + title);
  std::vector<std::vector<std::string>> summary;
  auto row = [&](const std::string& k, double v) { summary.push_back({k, human(v), python_float(v)}); };
  row("MACs", t.macs);
  row("BOPs", t.bops);
  row("weight bits", t.mem_w_bits);
  row("weight elements", t.mem_w_elems);
  row("output bits", t.mem_o_bits);
  row("output elements", t.mem_o_elems);
  if (!cost.accumulators.empty()) {
    summary.push_back({"accumulator bits (all layers)", std::to_string(accumulator_total), std::to_string(accumulator_total)});
    summary.push_back({"widest accumulator (bits)", std::to_string(widest), std::to_string(widest)});
  }
  page += html::table({"total", "", "exact"}, summary, {false, true, true});
  page += fmt::format("<p>sparsity discounted: {}; unsupported ops: {}; accumulators sized: {} of {} layers</p>\n",
                      cost.discount_sparsity ? "yes" : "no",
                      cost.unsupported.empty() ? "none" : html::escape(fmt::format("{}", fmt::join(cost.unsupported, ", "))),
                      cost.accumulators.size(), cost.nodes.size());

  std::vector<html::BarRow> macs, wbits, bits;
  std::vector<std::vector<std::string>> layers;
  for (const auto& n : cost.nodes) {
    const CostTotals nt = cost_totals(n.costs);
    macs.push_back({n.name, {nt.macs}, {human(nt.macs) + " MACs"}});
    wbits.push_back({n.name, {nt.mem_w_bits}, {human(nt.mem_w_bits) + " bits" + (n.weight_datatype.empty() ? "" : " (" + n.weight_datatype + ")")}});
    const auto acc = accumulator.find(n.name);
    const Accumulator* a = acc == accumulator.end() ? nullptr : acc->second;
    // -1: no bar (no weight, or no accumulator the analysis could size).
    html::BarRow b{n.name, {static_cast<double>(n.input_bits), n.weight_datatype.empty() ? -1.0 : n.weight_bits,
                            a ? static_cast<double>(accumulator_bits(*a)) : -1.0},
                   {fmt::format("{} ({})", n.input_bits, n.input_datatype),
                    n.weight_datatype.empty() ? "" : fmt::format("{} ({})", n.weight_bits, n.weight_datatype),
                    a ? fmt::format("{} ({}INT{})", accumulator_bits(*a), a->min >= 0 ? "U" : "", accumulator_bits(*a)) : ""}};
    bits.push_back(b);
    layers.push_back({n.name, n.op_type, python_float(nt.macs), python_float(nt.mem_w_bits), n.input_datatype,
                      n.weight_datatype.empty() ? "-" : n.weight_datatype, n.output_datatype,
                      a ? fmt::format("[{}, {}]", a->min, a->max) : "-", a ? std::to_string(accumulator_bits(*a)) : "-"});
  }
  page += html::bar_chart("MACs per layer", {{"MACs", "#4e79a7"}}, macs);
  page += html::bar_chart("Weight memory per layer (bits)", {{"weight bits", "#f28e2b"}}, wbits);
  page += html::bar_chart("Bit widths per layer",
                          {{"input bits", "#59a14f"}, {"weight bits", "#f28e2b"}, {"accumulator bits (exact, qonnx-cc range)", "#b07aa1"}},
                          bits);
  page += "<h2>Layers</h2>\n" +
          html::table({"layer", "op", "MACs", "weight bits", "input", "weight", "output", "accumulator range", "accumulator bits"},
                      layers, {false, false, true, true, false, false, false, true, true});
  return page + html::page_end();
}

}  // namespace qonnx::analysis
