// `channels-last` (qonnx-to-channels-last): the to-channels-last pass with its preparation and cleanup.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/log.h"

namespace qonnx::cli {
namespace {

struct ChannelsLastOptions {
  std::string input, output;
  bool make_input_channels_last = false, stats = false, in_place = false;
  int check = 0;
  uint64_t seed = 0;
};

int run_channels_last(ChannelsLastOptions o) {
  const std::string pipeline_text = fmt::format(
      "freeze-initializer-inputs,infer-shapes,to-channels-last{{make-input-channels-last={}}},cleanup",
      o.make_input_channels_last ? 1 : 0);
  auto pipeline = pass::parse_pipeline(pipeline_text);
  if (!pipeline.is_ok()) return report(pipeline.status());
  if (o.output.empty()) o.output = output_next_to_input(o.input, ".channels_last.onnx");
  if (Status st = refuse_to_overwrite_input(o.input, o.output, o.in_place); !st.is_ok()) return report(st);
  pass::PassContext ctx;
  auto ran = load_and_run(o.input, pipeline.value(), ctx);
  if (!ran.is_ok()) return report(ran.status());
  ir::Model model = std::move(ran).value();
  model.set_metadata("qonnx-cc.pipeline", pass::format_pipeline(pipeline.value()));
  model.set_metadata("qonnx-cc.version", QONNX_CC_VERSION);
  if (o.check > 0)
    if (int code = exact_check(o.input, model, o.check, o.seed); code != 0) return code;
  if (o.stats) print_pass_counters(ctx);
  if (Status st = save_result(model, o.output); !st.is_ok()) return report(st);
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
  cmd->add_flag("--in-place", o->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, o] { exit_code = run_channels_last(*o); });
}

}  // namespace qonnx::cli
