// What the quantizer passes did to each quantizer (folded | lowered | left | converted, and why), kept
// as a result in the PassContext for `convert --report` and the tests: an analysis result of those
// passes, not a field of the generic context.
#pragma once

#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/pass/pass.h"

namespace qonnx::passes {

struct QuantizerOutcome {
  std::string node, op_type, pass, outcome, detail;
};

struct QuantizerOutcomes {
  std::vector<QuantizerOutcome> list;  // in the order they happened
};

// Records what the pass now running (ctx.current()) did to `node`.
void record_outcome(pass::PassContext& ctx, const ir::Node& node, const std::string& outcome, const std::string& detail);
// Every outcome recorded in `ctx` (empty when none).
const std::vector<QuantizerOutcome>& quantizer_outcomes(const pass::PassContext& ctx);

}  // namespace qonnx::passes
