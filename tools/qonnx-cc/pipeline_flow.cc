#include "pipeline_flow.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/support/log.h"

namespace qonnx::cli {
namespace fs = std::filesystem;

std::string output_next_to_input(const std::string& input, const std::string& suffix) {
  const fs::path in(input);
  return (in.parent_path() / (in.stem().string() + suffix)).string();
}

Status refuse_to_overwrite_input(const std::string& input, const std::string& output, bool in_place) {
  std::error_code ec;
  if (in_place || !fs::exists(output, ec) || !fs::equivalent(input, output, ec)) return Status::ok();
  return Status(Code::kUsage, fmt::format("refusing to overwrite the input '{}' (use --in-place)", input));
}

Status run_on_input(ir::Model& model, const std::string& input, const std::vector<pass::PipelineItem>& pipeline,
                    pass::PassContext& ctx, const std::vector<pass::Instrumentation*>& hooks) {
  return pass::run_pipeline(model, pipeline, ctx, hooks).status().with_context(input);
}

Result<ir::Model> load_and_run(const std::string& input, const std::vector<pass::PipelineItem>& pipeline,
                               pass::PassContext& ctx) {
  QONNX_ASSIGN_OR_RETURN(ir::Model model, io::load_model(input));
  QONNX_RETURN_IF_ERROR(run_on_input(model, input, pipeline, ctx));
  return model;
}

Result<std::vector<analysis::OutputCheck>> check_against_input(const std::string& input, const ir::Model& result,
                                                               const analysis::CheckOptions& options) {
  QONNX_ASSIGN_OR_RETURN(ir::Model original, io::load_model(input));
  auto checks = analysis::check_equivalence(original, result, options);
  if (!checks.is_ok()) return std::move(checks).status().with_context("--check");
  return checks;
}

int exact_check(const std::string& input, const ir::Model& result, int runs, uint64_t seed) {
  auto checks = check_against_input(input, result, {runs, seed, 0.0, 0.0});
  if (!checks.is_ok()) return report(checks.status());
  bool failed = false;
  for (const auto& c : checks.value()) {
    if (c.ok) std::printf("check %s: bit-identical over %d runs\n", c.name.c_str(), runs);
    else if (!c.problem.empty()) std::printf("check %s: MISMATCH: %s\n", c.name.c_str(), c.problem.c_str());
    else std::printf("check %s: MISMATCH over %d runs: max abs error %.6g\n", c.name.c_str(), runs, c.max_abs_error);
    failed |= !c.ok;
  }
  if (!failed) return 0;
  std::fprintf(stderr, "qonnx-cc: error: --check: the result computes different values than the input; nothing written\n");
  return exit_code(Code::kMismatch);
}

void print_pass_counters(const pass::PassContext& ctx) {
  for (const auto& [pass, counters] : ctx.counters())
    for (const auto& [k, v] : counters) std::fprintf(stderr, "stats: %s: %s = %lld\n", pass.c_str(), k.c_str(), static_cast<long long>(v));
}

Status save_result(const ir::Model& model, const std::string& output, const io::SaveOptions& options) {
  QONNX_RETURN_IF_ERROR(io::save_model(model, output, options));
  log::info("wrote {}", output);
  return Status::ok();
}

}  // namespace qonnx::cli
