#include "qonnx/targets/target.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "qonnx/exec/kernel.h"
#include "qonnx/support/log.h"

namespace qonnx::targets {

namespace {

// The newest opset of the ONNX library qonnx-cc builds against (Debian's ONNX 1.12): its converter
// and shape inference run up to here, upgrade-opset's own adapters above.
constexpr int64_t kLibraryOpset = 17;

}  // namespace

Result<CheckOutcome> Target::check(const ir::Model& converted, const CheckRequest& request) const {
  return check_outputs_match(converted, request);
}

Result<CheckOutcome> check_outputs_match(const ir::Model& converted, const CheckRequest& request) {
  QONNX_ASSIGN_OR_RETURN(const ir::Model original, request.original());
  auto checks = analysis::check_equivalence(original, converted, {request.runs, request.seed, request.atol, request.rtol, request.arithmetic});
  if (!checks.is_ok()) return std::move(checks).status().with_context("--check");
  CheckOutcome out;
  append_check_lines(out, checks.value(), request.runs, "", fmt::format("beyond atol {:g} / rtol {:g}", request.atol, request.rtol));
  for (const auto& c : checks.value()) {
    out.checks.emplace_back("original", c);
    out.failed |= !c.ok;
  }
  if (out.failed) out.failure = fmt::format("the converted model differs beyond atol {:g} / rtol {:g}", request.atol, request.rtol);
  return out;
}

void append_check_lines(CheckOutcome& out, const std::vector<analysis::OutputCheck>& checks, int runs,
                        const std::string& against, const std::string& beyond, bool judged) {
  for (const auto& c : checks) {
    if (!c.problem.empty()) {
      out.lines.push_back(fmt::format("check {}: MISMATCH{}: {}", c.name, against, c.problem));
      continue;
    }
    const double share = c.elements > 0 ? 100.0 * static_cast<double>(c.mismatches) / static_cast<double>(c.elements) : 0.0;
    // printf's %g, which the line has always used.
    char errors[160];
    std::snprintf(errors, sizeof errors, "max abs error %.6g, max rel error %.6g, %lld of %lld elements (%.3g%%)",
                  c.max_abs_error, c.max_rel_error, static_cast<long long>(c.mismatches), static_cast<long long>(c.elements), share);
    out.lines.push_back(fmt::format("check {}: {} over {} runs{}: {} {}", c.name, !judged ? "reported" : c.ok ? "ok" : "MISMATCH",
                                    runs, against, errors, beyond));
  }
}

Status check_target_opset(int64_t opset) {
  if (opset != 0 && (opset < kOldestTargetOpset || opset > kNewestTargetOpset))
    return Status(Code::kUsage, fmt::format("target opset {} is outside {}..{}", opset, kOldestTargetOpset, kNewestTargetOpset));
  return Status::ok();
}

void add_opset_steps(pass::PipelineBuilder& builder, int64_t opset) {
  auto prepared = [&] {
    builder.add("fold-constants", {{"skip-quantizers", "1"}});
    builder.add("infer-shapes");
  };
  builder.add("upgrade-opset", {{"version", std::to_string(std::min(opset, kLibraryOpset))}});
  prepared();
  if (opset > kLibraryOpset) builder.add("upgrade-opset", {{"version", std::to_string(opset)}});
}

void add_lowering_steps(pass::PipelineBuilder& builder, int64_t opset, const pass::PassOptions& lower_quant) {
  builder.add("freeze-initializer-inputs");
  add_opset_steps(builder, opset ? opset : kOldestTargetOpset);
  builder.add("lower-quant", lower_quant);
  builder.add("lower-custom-ops").add("fold-constants").add("cleanup").add("infer-shapes");
}

Result<std::vector<pass::PipelineItem>> fresh_pipeline(const CheckRequest& request) {
  return pass::parse_pipeline(pass::format_pipeline(*request.pipeline));
}

Result<ir::Model> run_on_original(const CheckRequest& request, const std::vector<pass::PipelineItem>& pipeline,
                                  pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model model, request.original());
  const auto level = log::level();
  if (level < log::Level::kError) log::set_level(log::Level::kError);
  auto ran = pass::run_pipeline(model, pipeline, ctx);
  log::set_level(level);
  QONNX_RETURN_IF_ERROR(ran.status());
  return model;
}

bool uses_pass(const std::vector<pass::PipelineItem>& pipeline, const std::string& pass) {
  return std::any_of(pipeline.begin(), pipeline.end(),
                     [&](const pass::PipelineItem& i) { return i.pass == pass || uses_pass(i.group, pass); });
}

void TargetRegistry::add(std::unique_ptr<Target> target) { targets_.push_back(std::move(target)); }

const Target* TargetRegistry::find(const std::string& name) const {
  for (const auto& t : targets_)
    if (t->name() == name) return t.get();
  return nullptr;
}

std::vector<std::string> TargetRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& t : targets_) out.push_back(t->name());
  return out;
}

const Target* TargetRegistry::owner_of(const std::vector<pass::PipelineItem>& pipeline) const {
  for (const auto& t : targets_)
    if (t->owns_pipeline(pipeline)) return t.get();
  return nullptr;
}

void TargetRegistry::register_ops(exec::KernelRegistry& kernels) const {
  for (const auto& t : targets_) t->register_ops(kernels);
}

Result<std::string> pipeline_text(const std::string& name, int64_t opset) {
  const TargetRegistry& registry = TargetRegistry::global();
  const Target* target = registry.find(name);
  if (!target)
    return Status(Code::kUsage, fmt::format("unknown target '{}' (targets: {})", name, fmt::join(registry.names(), ", ")));
  QONNX_ASSIGN_OR_RETURN(const std::vector<pass::PipelineItem> pipeline, target->pipeline({opset}, pass::PassRegistry::global()));
  return pass::format_pipeline(pipeline);
}

TargetRegistry& TargetRegistry::global() {
  static TargetRegistry registry;
  return registry;
}

}  // namespace qonnx::targets
