// `cost` (qonnx-inference-cost): qonnx's preprocessing pipeline, then its cost model.
#include "api/input_context.h"
#include "qonnx/api/commands.h"
#include "qonnx/support/log.h"

namespace qonnx::api {

Result<CostResult> cost(ir::Model model, const CostOptions& o) {
  QONNX_ASSIGN_OR_RETURN(const auto pipeline, pass::parse_pipeline(analysis::cost_preprocess_pipeline(o.clip_aware)));
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, pipeline, ctx).status(), o.input_name));
  for (const auto& d : ctx.diagnostics())
    log::debug("[{}] {}{}", d.pass, d.node.empty() ? "" : "node '" + d.node + "': ", d.message);
  auto cost = analysis::inference_cost(model, {o.discount_sparsity, o.qonnx_ops_only});
  if (!cost.is_ok()) return with_input(std::move(cost).status(), o.input_name);
  for (const auto& w : cost->warnings) log::warn("{}", w);
  CostResult result;
  result.json = analysis::cost_json(cost.value(), o.breakdown, o.flat);
  result.cost = std::move(cost).value();
  result.preprocessed = std::move(model);
  return result;
}

}  // namespace qonnx::api
