// `cleanup`: qonnx-cleanup as a qonnx-cc pipeline (api::cleanup_pipeline lists the passes).
#include <cstdio>

#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/api/commands.h"
#include "qonnx/io/model_io.h"

namespace qonnx::cli {
namespace {

struct CleanupCommand {
  api::CleanupOptions cleanup;  // input_name: the input file
  std::string output;
  bool dump_pipeline = false, in_place = false;
};

int run_cleanup(CleanupCommand c) {
  const api::CleanupOptions& o = c.cleanup;
  auto text = api::cleanup_pipeline(o);
  if (!text.is_ok()) return report(text.status());
  if (c.dump_pipeline) {
    std::printf("%s\n", text->c_str());
    return 0;
  }
  if (c.output.empty()) c.output = output_next_to_input(o.input_name, "_clean.onnx");
  if (Status st = refuse_to_overwrite_input(o.input_name, c.output, c.in_place); !st.is_ok()) return report(st);
  auto loaded = io::load_model(o.input_name);
  if (!loaded.is_ok()) return report(loaded.status());
  auto cleaned = api::cleanup(std::move(loaded).value(), o);
  if (!cleaned.is_ok()) return report(cleaned.status());
  print_check_lines(cleaned->check_lines);
  if (cleaned->check_failed) return report_check_failure(cleaned->check_failure);
  if (Status st = save_result(cleaned->model, c.output); !st.is_ok()) return report(st);
  return 0;
}

}  // namespace

void add_cleanup_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("cleanup", "Tidy a QONNX model as qonnx-cleanup does (fold constants, keep quantizers, readable names)");
  cmd->footer(
      "Runs, as one pass pipeline (also usable with `convert --passes`, see --dump-pipeline):\n"
      "  qonnx-domains               QONNX ops to qonnx.custom_op.general, with its opset import\n"
      "  override-input-shape        --override-batchsize / --override-inpsize\n"
      "  freeze-initializer-inputs   static graph inputs (initializers listed as inputs) become constants\n"
      "  infer-shapes, unique-parameters (shared parameter tensors copied)\n"
      "  fold-constants              constants folded; quantizers kept unless --preserve-qnt-ops=0\n"
      "  fold-transpose-into-quant   Transpose after a weight Quant folded into its initializers\n"
      "  cleanup                     unused nodes, initializers, value_info, annotations removed\n"
      "  extract-conv-bias           with --extract-conv-bias: Conv bias into an Add\n"
      "  readable-names              nodes <op>_<k>, tensors <node>_out<k> / <node>_param<k>, global_in/out\n"
      "Exit codes as `qonnx-cc --help` lists them; 7 when --check finds a difference.\n"
      "Example:\n"
      "  qonnx-cc cleanup CNV_2W2A.onnx -o CNV_2W2A_clean.onnx --check 4\n"
      "  qonnx-cc cleanup mobilenet.onnx --override-inpsize \"(1,3,224,224)\" --extract-conv-bias\n");
  auto c = std::make_shared<CleanupCommand>();
  api::CleanupOptions* o = &c->cleanup;
  cmd->add_option("MODEL", o->input_name, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output,--out-file", c->output, "Output model (default: MODEL's folder, <stem>_clean.onnx)");
  cmd->add_option("--preserve-qnt-ops", o->preserve_qnt_ops,
                  "1 (default): keep Quant/BipolarQuant/Trunc/QuantizeLinear/DequantizeLinear on constants; 0: fold "
                  "weight quantizers into float weights too")
      ->default_val(true);
  cmd->add_option("--override-batchsize", o->override_batchsize, "Batch size of the first input and output")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--override-inpsize", o->override_inpsize,
                  "Shape of the first input, e.g. \"(1,3,224,224)\" (a single number: the batch size)");
  cmd->add_flag("--extract-conv-bias", o->extract_conv_bias, "Move Conv/ConvTranspose biases into Add nodes");
  cmd->add_option("--check", o->check,
                  "Run input and result on N seeded random inputs and require bit-identical outputs (exit 7 otherwise)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed for --check")->default_val(0);
  cmd->add_flag("--dump-pipeline", c->dump_pipeline, "Print the pass pipeline and stop");
  cmd->add_flag("--in-place", c->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, c] { exit_code = run_cleanup(*c); });
}

}  // namespace qonnx::cli
