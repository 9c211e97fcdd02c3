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

void print_check_lines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
}

int report_check_failure(const std::string& failure) {
  return report(Status(Code::kMismatch, failure + "; nothing written").with_context("--check"));
}

void print_pass_counters(const api::PassCounters& counters) {
  for (const auto& [pass, pass_counters] : counters)
    for (const auto& [k, v] : pass_counters) std::fprintf(stderr, "stats: %s: %s = %lld\n", pass.c_str(), k.c_str(), static_cast<long long>(v));
}

Status save_result(const ir::Model& model, const std::string& output, const io::SaveOptions& options) {
  QONNX_RETURN_IF_ERROR(io::save_model(model, output, options));
  log::info("wrote {}", output);
  return Status::ok();
}

}  // namespace qonnx::cli
