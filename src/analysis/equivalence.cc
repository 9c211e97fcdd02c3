#include "qonnx/analysis/equivalence.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "qonnx/exec/compare.h"
#include "qonnx/exec/executor.h"

namespace qonnx::analysis {

Result<std::vector<OutputCheck>> check_equivalence(const ir::Model& original, const ir::Model& converted,
                                                   const CheckOptions& options) {
  auto a = exec::Executor::create(original, options.arithmetic);
  if (!a.is_ok()) return std::move(a).status().with_context("running the original model");
  auto b = exec::Executor::create(converted, options.arithmetic);
  if (!b.is_ok()) return std::move(b).status().with_context("running the converted model");
  const auto& outs = original.graph().outputs();
  if (outs.size() != converted.graph().outputs().size())
    return Status(Code::kMismatch, fmt::format("the original has {} outputs, the result {}", outs.size(),
                                               converted.graph().outputs().size()));
  std::vector<OutputCheck> checks(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) checks[k].name = outs[k]->name();
  for (int run = 0; run < options.runs; ++run) {
    auto feeds = exec::random_inputs(original.graph(), options.seed + static_cast<uint64_t>(run));
    if (!feeds.is_ok()) return std::move(feeds).status().with_context("making the inputs");
    auto ra = a->run(feeds.value());
    if (!ra.is_ok()) return std::move(ra).status().with_context("running the original model");
    // A pass may rename the inputs (readable-names): the converted model gets them by position.
    std::map<std::string, Tensor> converted_feeds;
    const auto original_inputs = original.graph().runtime_inputs(), converted_inputs = converted.graph().runtime_inputs();
    for (size_t i = 0; i < original_inputs.size(); ++i) {
      auto fed = feeds->find(original_inputs[i]->name());
      if (fed == feeds->end()) continue;
      converted_feeds[i < converted_inputs.size() ? converted_inputs[i]->name() : fed->first] = fed->second;
    }
    auto rb = b->run(converted_feeds);
    if (!rb.is_ok()) return std::move(rb).status().with_context("running the converted model");
    for (size_t k = 0; k < outs.size(); ++k) {
      auto c = exec::compare_tensors(rb->outputs[k], ra->outputs[k], options.atol, options.rtol);
      OutputCheck& oc = checks[k];
      if (!c.dtype_match || !c.shape_match) {
        oc.ok = false;
        oc.problem = !c.dtype_match ? fmt::format("dtype {} vs {}", dtype_name(rb->outputs[k].dtype()), dtype_name(ra->outputs[k].dtype()))
                                    : fmt::format("shape {} vs {}", dims_to_string(rb->outputs[k].dims()), dims_to_string(ra->outputs[k].dims()));
        continue;
      }
      oc.max_abs_error = std::max(oc.max_abs_error, c.max_abs_error);
      oc.max_rel_error = std::max(oc.max_rel_error, c.max_rel_error);
      oc.mismatches += c.mismatches;
      oc.elements += rb->outputs[k].numel();
      oc.ok = oc.ok && c.ok();
    }
  }
  return checks;
}

}  // namespace qonnx::analysis
