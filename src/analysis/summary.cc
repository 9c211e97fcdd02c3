#include "qonnx/analysis/summary.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/exec/dtype_dispatch.h"
#include "qonnx/support/json.h"

namespace qonnx::analysis {
namespace {

std::string type_string(const ir::Graph& g, const ir::Value* v) {
  auto t = g.type_of(v);
  if (!t) return "?";
  std::string s = dtype_name(t->dtype);
  if (!t->has_shape) return s;
  std::vector<std::string> dims;
  for (size_t i = 0; i < t->dims.size(); ++i)
    dims.push_back(t->dims[i] >= 0 ? std::to_string(t->dims[i]) : (t->dim_params[i].empty() ? "?" : t->dim_params[i]));
  return fmt::format("{}[{}]", s, fmt::join(dims, ","));
}

std::optional<Tensor> constant_input(const ir::Graph& g, const ir::Node& n, size_t i) {
  const ir::Value* v = n.input(i);
  if (!v || !v->is_initializer()) return std::nullopt;
  auto t = g.initializer_tensor(v);
  if (!t.is_ok()) return std::nullopt;
  return t.value();
}

void describe_scale(const ir::Graph& g, const ir::Node& n, QuantNodeInfo& q) {
  auto scale = constant_input(g, n, 1);
  if (!scale) {
    q.scale = "dynamic";
    return;
  }
  if (scale->numel() == 1) {
    q.scale = "per-tensor";
    q.scale_value = exec::element_as_double(*scale, 0);
    return;
  }
  int varying = -1, count = 0;
  for (size_t d = 0; d < scale->rank(); ++d)
    if (scale->dim(d) != 1) {
      varying = static_cast<int>(d);
      ++count;
    }
  if (count != 1) {
    q.scale = "per-element";
    return;
  }
  int64_t x_rank = static_cast<int64_t>(scale->rank());
  if (const ir::Value* x = n.input(0)) {
    auto t = g.type_of(x);
    if (t && t->has_shape) x_rank = static_cast<int64_t>(t->dims.size());
  }
  int64_t axis = x_rank - static_cast<int64_t>(scale->rank()) + varying;
  q.scale = fmt::format("per-channel (axis {}, {} channels)", axis, scale->dim(static_cast<size_t>(varying)));
}

void describe_zero_point(const ir::Graph& g, const ir::Node& n, QuantNodeInfo& q) {
  auto zp = constant_input(g, n, 2);
  if (!zp) {
    q.zero_point = n.input(2) ? "dynamic" : "none";
    return;
  }
  bool all_zero = true;
  for (int64_t i = 0; i < zp->numel(); ++i) all_zero &= exec::element_as_double(*zp, i) == 0.0;
  q.zero_point = all_zero ? "0" : (zp->numel() == 1 ? fmt::format("{}", exec::element_as_double(*zp, 0)) : "per-channel");
}

}  // namespace

ModelSummary summarize(const ir::Model& model) {
  ModelSummary s;
  const auto& h = model.header();
  const ir::Graph& g = model.graph();
  s.ir_version = h.ir_version();
  s.producer = h.producer_name() + (h.producer_version().empty() ? "" : " " + h.producer_version());
  for (const auto& op : h.opset_import()) s.opsets.emplace_back(op.domain().empty() ? "ai.onnx" : op.domain(), op.version());
  g.visit_graphs([&](const ir::Graph& graph) { s.node_count += graph.nodes().size(); });
  for (const ir::Value* v : g.runtime_inputs()) s.inputs.push_back({v->name(), type_string(g, v)});
  for (const ir::Value* v : g.outputs()) s.outputs.push_back({v->name(), type_string(g, v)});
  // Ops and quantizers inside If/Loop/Scan bodies count too.
  g.visit_graphs([&](const ir::Graph& graph) {
    for (const auto& node : graph.nodes()) {
      s.op_counts[fmt::format("{}::{}", node->domain().empty() ? "ai.onnx" : node->domain(), node->op_type())]++;
      if (!dialect::is_quantizer(*node)) continue;
      QuantNodeInfo q;
      q.name = node->name();
      q.op_type = node->op_type();
      q.domain = node->domain();
      // `info` describes any model: a mistyped flag shows its default here (`check` reports it).
      auto is_signed = node->attr<bool>("signed", true), narrow = node->attr<bool>("narrow", false);
      q.is_signed = !is_signed.is_ok() || is_signed.value();
      q.narrow = narrow.is_ok() && narrow.value();
      const dialect::Op op = dialect::classify(*node);
      const bool trunc = op == dialect::Op::kTrunc;
      q.rounding_mode = op == dialect::Op::kBipolarQuant ? "-" : node->attr_string("rounding_mode", trunc ? "FLOOR" : "ROUND");
      if (op == dialect::Op::kFloatQuant) {
        // Minifloat: inputs X, scale, exponent_bitwidth, mantissa_bitwidth, exponent_bias, max_val.
        auto e = constant_input(graph, *node, 2), m = constant_input(graph, *node, 3);
        if (e && m && e->numel() == 1 && m->numel() == 1)
          q.bitwidth = 1 + exec::element_as_double(*e, 0) + exec::element_as_double(*m, 0);
        q.format = e && m && e->numel() == 1 && m->numel() == 1
                       ? fmt::format("minifloat E{}M{}", exec::element_as_double(*e, 0), exec::element_as_double(*m, 0))
                       : "minifloat";
        q.is_signed = true;
        q.narrow = false;
        describe_scale(graph, *node, q);
        q.zero_point = "none";
        s.quant_nodes.push_back(std::move(q));
        continue;
      }
      if (op == dialect::Op::kBipolarQuant) {
        q.bitwidth = 1;
      } else {
        size_t bw_index = trunc ? node->inputs().size() - 1 : 3;
        if (auto bw = constant_input(graph, *node, bw_index); bw && bw->numel() == 1) q.bitwidth = exec::element_as_double(*bw, 0);
      }
      describe_scale(graph, *node, q);
      if (op == dialect::Op::kBipolarQuant) q.zero_point = "none";
      else describe_zero_point(graph, *node, q);
      s.quant_nodes.push_back(std::move(q));
    }
  });
  s.initializer_count = g.initializers().size();
  for (const auto& init : g.initializers()) {
    int64_t n = checked_numel(Dims(init.proto->dims().begin(), init.proto->dims().end()));
    const DType dtype = static_cast<DType>(init.proto->data_type());
    s.initializer_bytes += static_cast<size_t>(stored_nbytes(dtype, n));
    ++s.initializer_type_counts[dtype_name(dtype)];
  }
  s.annotation_count = static_cast<size_t>(g.rest().quantization_annotation_size());
  return s;
}

std::string format_text(const ModelSummary& s) {
  std::string out;
  out += fmt::format("ir_version: {}\nproducer: {}\n", s.ir_version, s.producer.empty() ? "-" : s.producer);
  std::vector<std::string> ops;
  for (const auto& [d, v] : s.opsets) ops.push_back(fmt::format("{} {}", d, v));
  out += fmt::format("opsets: {}\n", fmt::join(ops, ", "));
  for (const auto& v : s.inputs) out += fmt::format("input: {} {}\n", v.name, v.type);
  for (const auto& v : s.outputs) out += fmt::format("output: {} {}\n", v.name, v.type);
  out += fmt::format("nodes: {}\n", s.node_count);
  for (const auto& [op, n] : s.op_counts) out += fmt::format("  {:<48} {}\n", op, n);
  out += fmt::format("initializers: {} ({} bytes)\n", s.initializer_count, s.initializer_bytes);
  for (const auto& [type, n] : s.initializer_type_counts) out += fmt::format("  {:<48} {}\n", type, n);
  out += fmt::format("finn_datatype annotations: {}\n", s.annotation_count);
  out += fmt::format("quantizers: {}\n", s.quant_nodes.size());
  for (const auto& q : s.quant_nodes) {
    std::string bw = q.bitwidth ? fmt::format("{}", *q.bitwidth) : "dynamic";
    std::string scale = q.scale_value ? fmt::format("{} {}", q.scale, *q.scale_value) : q.scale;
    out += fmt::format("  {} {}: bits={}{} signed={} narrow={} rounding={} scale={} zeropt={}\n", q.op_type, q.name, bw,
                       q.format.empty() ? "" : " (" + q.format + ")", q.is_signed ? 1 : 0, q.narrow ? 1 : 0,
                       q.rounding_mode, scale, q.zero_point);
  }
  return out;
}

std::string format_json(const ModelSummary& s) {
  JsonWriter w;
  w.begin_object();
  w.key("ir_version").value(s.ir_version);
  w.key("producer").value(s.producer);
  w.key("opsets").begin_object();
  for (const auto& [d, v] : s.opsets) w.key(d).value(v);
  w.end_object();
  auto values = [&](const char* k, const std::vector<ValueSummary>& vs) {
    w.key(k).begin_array();
    for (const auto& v : vs) w.begin_object().key("name").value(v.name).key("type").value(v.type).end_object();
    w.end_array();
  };
  values("inputs", s.inputs);
  values("outputs", s.outputs);
  w.key("node_count").value(s.node_count);
  w.key("op_counts").begin_object();
  for (const auto& [op, n] : s.op_counts) w.key(op).value(n);
  w.end_object();
  w.key("initializer_count").value(s.initializer_count);
  w.key("initializer_bytes").value(s.initializer_bytes);
  w.key("initializer_types").begin_object();
  for (const auto& [type, n] : s.initializer_type_counts) w.key(type).value(n);
  w.end_object();
  w.key("finn_datatype_annotations").value(s.annotation_count);
  w.key("quantizers").begin_array();
  for (const auto& q : s.quant_nodes) {
    w.begin_object();
    w.key("name").value(q.name).key("op_type").value(q.op_type).key("domain").value(q.domain);
    w.key("bitwidth");
    if (q.bitwidth) w.value(*q.bitwidth);
    else w.null();
    w.key("signed").value(q.is_signed).key("narrow").value(q.narrow);
    w.key("rounding_mode").value(q.rounding_mode).key("scale").value(q.scale);
    w.key("scale_value");
    if (q.scale_value) w.value(*q.scale_value);
    else w.null();
    w.key("zero_point").value(q.zero_point);
    if (!q.format.empty()) w.key("format").value(q.format);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

}  // namespace qonnx::analysis
