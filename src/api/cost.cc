// `cost` (qonnx-inference-cost): qonnx's preprocessing pipeline, then its cost model, and the exact
// accumulator widths of the linear layers (qonnx-cc range).
#include <algorithm>

#include "api/input_context.h"
#include "qonnx/api/commands.h"
#include "qonnx/support/log.h"

namespace qonnx::api {

namespace {

// The accumulators are computed before the constants are folded: folding turns a weight quantizer into
// plain float values (codes times scale), and the integer codes would be lost. Each one is kept with
// its layer's node object: the rest of the preprocessing renames nodes and tensors as qonnx does, but
// leaves the linear layers in place, so after it the accumulators take their layers' final names.
using TaggedAccumulators = std::vector<std::pair<const ir::Node*, analysis::Accumulator>>;

TaggedAccumulators tag_accumulators(const ir::Model& model) {
  auto analyzed = analysis::analyze_ranges(model, {});
  if (!analyzed.is_ok()) {
    log::warn("accumulator widths not computed: {}", analyzed.status().to_string());
    return {};
  }
  TaggedAccumulators out;
  // By output tensor: node names may be empty or repeated before the renaming; value names are unique.
  for (analysis::Accumulator& a : analyzed->accumulators)
    if (const ir::Value* v = model.graph().find_value(a.output); v && v->producer()) out.emplace_back(v->producer(), std::move(a));
  return out;
}

// The tagged layers still in the graph (the same node object running the same op), in graph order, renamed.
std::vector<analysis::Accumulator> collect_accumulators(const ir::Model& model, const TaggedAccumulators& tagged) {
  std::vector<analysis::Accumulator> out;
  for (const auto& n : model.graph().nodes())
    for (const auto& [node, acc] : tagged)
      if (node == n.get() && n->op_type() == acc.op_type) {
        out.push_back(acc);
        out.back().node = n->name();
        out.back().output = n->output(0) ? n->output(0)->name() : "";
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
  const TaggedAccumulators accumulators = tag_accumulators(model);
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, after, ctx).status(), o.input_name));
  for (const auto& d : ctx.diagnostics())
    log::debug("[{}] {}{}", d.pass, d.node.empty() ? "" : "node '" + d.node + "': ", d.message);
  auto cost = analysis::inference_cost(model, {o.discount_sparsity, o.qonnx_ops_only});
  if (!cost.is_ok()) return with_input(std::move(cost).status(), o.input_name);
  for (const auto& w : cost->warnings) log::warn("{}", w);
  // Only layers the cost model costs (a layer folded away or not costed has no row to join).
  std::vector<analysis::Accumulator> found = collect_accumulators(model, accumulators);
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
