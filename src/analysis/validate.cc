#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/analysis/validate.h"

#include <algorithm>

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include "qonnx/quant/params.h"
#include "qonnx/exec/executor.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/support/log.h"

namespace qonnx::analysis {
namespace {

Status run_onnx_checker(const ir::Model& model) {
  auto opset = model.opset("");
  int64_t known = onnxlib::onnx_library_opset();
  if (opset && *opset > known) {
    log::info("ONNX library checks skipped: the installed ONNX library knows opsets <= {}, the model uses {}", known, *opset);
    return Status::ok();
  }
  return onnxlib::onnx_check(model);
}

Status check_quant_parameters(const ir::Model& model) {
  // Quantizers inside If/Loop/Scan bodies are checked like the main graph's.
  std::vector<const ir::Node*> quantizers;
  model.graph().visit_graphs([&](const ir::Graph& graph) {
    for (const auto& node : graph.nodes()) quantizers.push_back(node.get());
  });
  for (const ir::Node* node : quantizers) {
    const ir::Graph& g = *node->graph();
    if (!dialect::is_integer_quantizer(*node)) continue;
    std::vector<Tensor> constants(node->inputs().size());
    std::vector<const Tensor*> ins(node->inputs().size(), nullptr);
    for (size_t i = 1; i < node->inputs().size(); ++i) {
      const ir::Value* v = node->input(i);
      if (!v || !v->is_initializer()) continue;
      auto t = g.initializer_tensor(v);
      if (!t.is_ok()) return std::move(t).status().with_context(node->describe());
      constants[i] = t.value();
      ins[i] = &constants[i];
    }
    const quant::NodeInputs ctx(*node, ins);
    auto with_node = [&](Status st) { return std::move(st).with_context(node->describe()); };
    const dialect::Op op = dialect::classify(*node);
    if (ins.size() > 1 && ins[1]) {
      auto s = quant::scale_input(ctx, 1, "scale");
      if (!s.is_ok()) return with_node(s.status());
    }
    if (op == dialect::Op::kBipolarQuant) continue;
    std::vector<std::pair<size_t, const char*>> bit_inputs;
    if (op == dialect::Op::kTrunc) bit_inputs = {{3, "in_bitwidth"}, {ins.size() - 1, "out_bitwidth"}};
    else bit_inputs = {{3, "bitwidth"}};
    for (auto [i, what] : bit_inputs) {
      if (i < ins.size() && ins[i]) {
        auto b = quant::bitwidth_input(ctx, i, what);
        if (!b.is_ok()) return with_node(b.status());
      }
    }
    auto mode = quant::rounding_attr(*node, op == dialect::Op::kTrunc ? "FLOOR" : "ROUND");
    if (!mode.is_ok()) return with_node(mode.status());
  }
  return Status::ok();
}

}  // namespace

std::vector<std::string> unknown_ops(const ir::Model& model) {
  const auto& registry = exec::KernelRegistry::global();
  std::vector<std::string> unknown;
  model.graph().visit_graphs([&](const ir::Graph& g) {
    for (const auto& node : g.nodes()) {
      const int64_t version = model.op_version(node->domain());
      if (registry.find(node->domain(), node->op_type(), version)) continue;
      const std::string domain = ir::is_default_domain(node->domain()) ? "" : node->domain();
      if (onnx::OpSchemaRegistry::Schema(node->op_type(), static_cast<int>(version), domain)) continue;
      const std::string what = fmt::format("{}::{}", domain.empty() ? "ai.onnx" : domain, node->op_type());
      if (std::find(unknown.begin(), unknown.end(), what) == unknown.end()) unknown.push_back(what);
    }
  });
  return unknown;
}

Status validate_model(const ir::Model& model) {
  QONNX_RETURN_IF_ERROR(run_onnx_checker(model));
  QONNX_RETURN_IF_ERROR(exec::check_plannable(model));
  return check_quant_parameters(model);
}

}  // namespace qonnx::analysis
