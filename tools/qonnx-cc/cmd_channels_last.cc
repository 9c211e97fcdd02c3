// `channels-last` (qonnx-to-channels-last): the to-channels-last pass with its preparation and cleanup.
#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/api/commands.h"
#include "qonnx/io/model_io.h"

namespace qonnx::cli {
namespace {

struct ChannelsLastCommand {
  api::ChannelsLastOptions channels_last;  // input_name: the input file
  std::string output;
  bool stats = false, in_place = false;
};

int run_channels_last(ChannelsLastCommand c) {
  const api::ChannelsLastOptions& o = c.channels_last;
  if (c.output.empty()) c.output = output_next_to_input(o.input_name, ".channels_last.onnx");
  if (Status st = refuse_to_overwrite_input(o.input_name, c.output, c.in_place); !st.is_ok()) return report(st);
  auto loaded = io::load_model(o.input_name);
  if (!loaded.is_ok()) return report(loaded.status());
  auto converted = api::channels_last(std::move(loaded).value(), o);
  if (!converted.is_ok()) return report(converted.status());
  print_check_lines(converted->check_lines);
  if (converted->check_failed) return report_check_failure(converted->check_failure);
  if (c.stats) print_pass_counters(converted->counters);
  if (Status st = save_result(converted->model, c.output); !st.is_ok()) return report(st);
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
  auto c = std::make_shared<ChannelsLastCommand>();
  api::ChannelsLastOptions* o = &c->channels_last;
  cmd->add_option("MODEL", o->input_name, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output", c->output, "Output model (default: MODEL's folder, <stem>.channels_last.onnx)");
  cmd->add_flag("--make-input-channels-last", o->make_input_channels_last,
                "Graph inputs feeding channels-last ops become channels-last (the caller feeds NHWC data)");
  auto* check = cmd->add_option("--check", o->check, "Compare input and result exactly on N seeded random inputs (exit 7 on a mismatch)")
                    ->check(CLI::NonNegativeNumber);
  check->excludes(cmd->get_option("--make-input-channels-last"));
  cmd->add_option("--seed", o->seed, "Seed for --check")->default_val(0);
  cmd->add_flag("--stats", c->stats, "Print per-pass counters to stderr");
  cmd->add_flag("--in-place", c->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, c] { exit_code = run_channels_last(*c); });
}

}  // namespace qonnx::cli
