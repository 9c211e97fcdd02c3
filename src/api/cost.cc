// `cost` (qonnx-inference-cost): qonnx's preprocessing pipeline, then its cost model, and the exact
// accumulator widths of the linear layers (qonnx-cc range).
#include <algorithm>

#include "api/input_context.h"
#include "qonnx/api/commands.h"
#include "qonnx/support/log.h"

namespace qonnx::api {

namespace {

// Marks a linear layer through the preprocessing: the index of its accumulator. Removed afterwards.
constexpr const char* kAccumulatorTag = "qonnx_cc_accumulator";

// The accumulators are computed before the constants are folded: folding turns a weight quantizer into
// plain float values (codes times scale), and the integer codes would be lost. Each analysed layer is
// tagged, so that after the rest of the preprocessing (which renames the nodes as qonnx does) the
// accumulators take the layers' final names.
std::vector<analysis::Accumulator> tag_accumulators(ir::Model& model) {
  auto analyzed = analysis::analyze_ranges(model, {});
  if (!analyzed.is_ok()) {
    log::warn("accumulator widths not computed: {}", analyzed.status().to_string());
    return {};
  }
  std::vector<analysis::Accumulator> out = std::move(analyzed->accumulators);
  // By output tensor: node names may be empty or repeated before the renaming; value names are unique.
  for (size_t k = 0; k < out.size(); ++k)
    if (const ir::Value* v = model.graph().find_value(out[k].output); v && v->producer())
      v->producer()->set_attr(kAccumulatorTag, static_cast<int64_t>(k));
  return out;
}

// The tagged layers still in the graph, renamed; the tags removed.
std::vector<analysis::Accumulator> collect_accumulators(ir::Model& model, std::vector<analysis::Accumulator> tagged) {
  std::vector<analysis::Accumulator> out;
  for (const auto& n : model.graph().nodes()) {
    if (!n->has_attr(kAccumulatorTag)) continue;
    const auto k = n->attr<int64_t>(kAccumulatorTag);
    n->remove_attr(kAccumulatorTag);
    if (!k.is_ok() || k.value() < 0 || static_cast<size_t>(k.value()) >= tagged.size()) continue;
    analysis::Accumulator a = tagged[static_cast<size_t>(k.value())];
    a.node = n->name();
    a.output = n->output(0) ? n->output(0)->name() : "";
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Result<CostResult> cost(ir::Model model, const CostOptions& o) {
  QONNX_ASSIGN_OR_RETURN(auto pipeline, pass::parse_pipeline(analysis::cost_preprocess_pipeline(o.clip_aware)));
  // The preprocessing up to the constant folding, the accumulator analysis, then the rest.
  const auto fold = std::find_if(pipeline.begin(), pipeline.end(), [](const pass::PipelineItem& i) { return i.pass == "fold-constants"; });
  const std::vector<pass::PipelineItem> before(pipeline.begin(), fold), after(fold, pipeline.end());
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, before, ctx).status(), o.input_name));
  std::vector<analysis::Accumulator> accumulators = tag_accumulators(model);
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, after, ctx).status(), o.input_name));
  for (const auto& d : ctx.diagnostics())
    log::debug("[{}] {}{}", d.pass, d.node.empty() ? "" : "node '" + d.node + "': ", d.message);
  auto cost = analysis::inference_cost(model, {o.discount_sparsity, o.qonnx_ops_only});
  if (!cost.is_ok()) return with_input(std::move(cost).status(), o.input_name);
  for (const auto& w : cost->warnings) log::warn("{}", w);
  // Only layers the cost model costs (a layer folded away or not costed has no row to join).
  std::vector<analysis::Accumulator> found = collect_accumulators(model, std::move(accumulators));
  for (auto& a : found)
    if (std::any_of(cost->nodes.begin(), cost->nodes.end(), [&a](const analysis::NodeCost& n) { return n.name == a.node; }))
      cost->accumulators.push_back(std::move(a));
  CostResult result;
  result.json = analysis::cost_json(cost.value(), o.breakdown, o.flat);
  result.cost = std::move(cost).value();
  result.preprocessed = std::move(model);
  return result;
}

}  // namespace qonnx::api
