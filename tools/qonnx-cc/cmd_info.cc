// `info` and `check`: what a model holds, and whether qonnx-cc can load and run it.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/io/model_io.h"

namespace qonnx::cli {

int report(const Status& status) {
  // Hostile models can put megabytes into a message (a million-entry perm, a huge name): keep
  // the head and say how much was cut.
  constexpr size_t kMaxMessage = 4096;
  std::string text = status.to_string();
  // The library states the limit; the flag that sets it is the CLI's to name.
  if (text.find("over the memory limit") != std::string::npos) text += " (raise it with --max-memory)";
  if (text.size() > kMaxMessage)
    text = text.substr(0, kMaxMessage) + fmt::format("... ({} more characters)", text.size() - kMaxMessage);
  std::fprintf(stderr, "qonnx-cc: error: %s\n", text.c_str());
  return exit_code(status.code());
}

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Print opsets, op counts, quantizers and initializer sizes");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("MODEL", *path, "Model file (.onnx)")->required();
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->callback([&exit_code, path, json] {
    auto model = io::load_model(*path);
    if (!model.is_ok()) {
      exit_code = report(model.status());
      return;
    }
    auto summary = analysis::summarize(model.value());
    std::string out = *json ? analysis::format_json(summary) : analysis::format_text(summary);
    std::fwrite(out.data(), 1, out.size(), stdout);
  });
}

void add_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("check", "Validate a model: structure, ONNX checker, kernels, quantizer parameters");
  auto path = std::make_shared<std::string>();
  cmd->add_option("MODEL", *path, "Model file (.onnx)")->required();
  cmd->callback([&exit_code, path] {
    auto model = io::load_model(*path);
    if (!model.is_ok()) {
      exit_code = report(model.status());
      return;
    }
    Status st = analysis::validate_model(model.value());
    if (!st.is_ok()) {
      exit_code = report(std::move(st).with_context(*path));
      return;
    }
    std::printf("%s: ok (%zu nodes)\n", path->c_str(), model->graph().nodes().size());
  });
}

}  // namespace qonnx::cli
