// `channels-last` (qonnx-to-channels-last): the to-channels-last pass with its preparation and cleanup.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/log.h"

namespace qonnx::cli {
namespace {

struct ChannelsLastOptions {
  std::string input, output;
  bool make_input_channels_last = false, stats = false;
  int check = 0;
  uint64_t seed = 0;
};

int run_channels_last(ChannelsLastOptions o) {
  const std::string pipeline_text = fmt::format(
      "freeze-initializer-inputs,infer-shapes,to-channels-last{{make-input-channels-last={}}},cleanup",
      o.make_input_channels_last ? 1 : 0);
  auto pipeline = pass::parse_pipeline(pipeline_text);
  if (!pipeline.is_ok()) return report(pipeline.status());
  if (o.output.empty()) {
    std::filesystem::path in(o.input);
    o.output = (in.parent_path() / (in.stem().string() + ".channels_last.onnx")).string();
  }
  std::error_code ec;
  if (std::filesystem::weakly_canonical(o.input, ec) == std::filesystem::weakly_canonical(o.output, ec))
    return report(Status(Code::kUsage, fmt::format("refusing to overwrite the input '{}'", o.input)));
  auto loaded = io::load_model(o.input);
  if (!loaded.is_ok()) return report(loaded.status());
  ir::Model model = std::move(loaded).value();
  pass::PassContext ctx;
  auto ran = pass::run_pipeline(model, pipeline.value(), ctx);
  if (!ran.is_ok()) return report(std::move(ran).status().with_context(o.input));
  model.set_metadata("qonnx-cc.pipeline", pass::format_pipeline(pipeline.value()));
  model.set_metadata("qonnx-cc.version", QONNX_CC_VERSION);
  if (o.check > 0) {
    auto original = io::load_model(o.input);
    if (!original.is_ok()) return report(original.status());
    auto checks = analysis::check_equivalence(original.value(), model, analysis::CheckOptions{o.check, o.seed, 0.0, 0.0});
    if (!checks.is_ok()) return report(std::move(checks).status().with_context("--check"));
    bool failed = false;
    for (const auto& c : checks.value()) {
      std::printf("check %s: %s over %d runs: max abs error %.6g\n", c.name.c_str(), c.ok ? "ok" : "MISMATCH", o.check,
                  c.max_abs_error);
      failed |= !c.ok;
    }
    if (failed) {
      std::fprintf(stderr, "qonnx-cc: error: --check: the result differs from the input; nothing written\n");
      return static_cast<int>(Code::kMismatch);
    }
  }
  if (o.stats)
    for (const auto& [pass, counters] : ctx.counters())
      for (const auto& [k, v] : counters) std::fprintf(stderr, "stats: %s: %s = %lld\n", pass.c_str(), k.c_str(), static_cast<long long>(v));
  if (Status st = io::save_model(model, o.output); !st.is_ok()) return report(st);
  log::info("wrote {}", o.output);
  return 0;
}

}  // namespace

void add_channels_last_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "channels-last",
      "Convert Conv/MaxPool/BatchNormalization to qonnx.custom_op.channels_last and the graph around them to "
      "channels-last layout (as qonnx-to-channels-last; branches, joins, Concat and Resize included)");
  cmd->footer(
      "Example:\n"
      "  qonnx-cc channels-last model.onnx -o model_nhwc.onnx --check 4\n"
      "Transposes move through element-wise ops, quantizers, Concat and nearest Resize, into constants, and\n"
      "cancel; the ones left sit where a channels-first reader (or a graph output) needs them. Graph inputs\n"
      "and outputs keep their layout unless --make-input-channels-last. The result computes bit for bit what\n"
      "the input did (--check compares exactly, with zero tolerance). It runs in qonnx and qonnx-cc; standard\n"
      "ONNX runtimes do not know the channels_last domain (`convert --passes lower-custom-ops` lowers it).");
  auto o = std::make_shared<ChannelsLastOptions>();
  cmd->add_option("MODEL", o->input, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output, "Output model (default: MODEL's folder, <stem>.channels_last.onnx)");
  cmd->add_flag("--make-input-channels-last", o->make_input_channels_last,
                "Graph inputs feeding channels-last ops become channels-last (the caller feeds NHWC data)");
  auto* check = cmd->add_option("--check", o->check, "Compare input and result exactly on N seeded random inputs (exit 7 on a mismatch)")
                    ->check(CLI::NonNegativeNumber);
  check->excludes(cmd->get_option("--make-input-channels-last"));
  cmd->add_option("--seed", o->seed, "Seed for --check")->default_val(0);
  cmd->add_flag("--stats", o->stats, "Print per-pass counters to stderr");
  cmd->callback([&exit_code, o] { exit_code = run_channels_last(*o); });
}

}  // namespace qonnx::cli
