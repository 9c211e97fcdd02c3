#include "qonnx/passes/quantizer_outcomes.h"

namespace qonnx::passes {

void record_outcome(pass::PassContext& ctx, const ir::Node& node, const std::string& outcome, const std::string& detail) {
  ctx.result<QuantizerOutcomes>().list.push_back(QuantizerOutcome{node.name(), node.op_type(), ctx.current(), outcome, detail});
}

const std::vector<QuantizerOutcome>& quantizer_outcomes(const pass::PassContext& ctx) {
  static const std::vector<QuantizerOutcome> kNone;
  const QuantizerOutcomes* outcomes = ctx.find_result<QuantizerOutcomes>();
  return outcomes ? outcomes->list : kNone;
}

}  // namespace qonnx::passes
