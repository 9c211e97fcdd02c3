// `cleanup`: qonnx-cleanup as a qonnx-cc pipeline (see cleanup_pipeline for the passes).
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/log.h"

namespace qonnx::cli {
namespace {

struct CleanupOptions {
  std::string input, output, override_inpsize;
  bool preserve_qnt_ops = true, extract_conv_bias = false, dump_pipeline = false, in_place = false;
  int64_t override_batchsize = 0;
  int check = 0;
  uint64_t seed = 0;
};

// qonnx's --override-inpsize: "(1,3,224,224)" sets the input shape, a single number the batch size.
Result<std::string> shape_option(const CleanupOptions& o) {
  std::string dims;
  for (char c : o.override_inpsize) {
    if (c >= '0' && c <= '9') dims += c;
    else if (c == ',') dims += 'x';
    else if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ')
      return Status(Code::kUsage, fmt::format("--override-inpsize '{}': expected a tuple like (1,3,224,224) or a batch size", o.override_inpsize));
  }
  if (dims.find('x') == std::string::npos) return dims.empty() ? "" : "{batch=" + dims + "}";
  return "{shape=" + dims + "}";
}

Result<std::string> cleanup_pipeline(const CleanupOptions& o) {
  std::string p = "qonnx-domains";
  if (!o.override_inpsize.empty()) {
    QONNX_ASSIGN_OR_RETURN(std::string opts, shape_option(o));
    if (!opts.empty()) p += ",override-input-shape" + opts;
  } else if (o.override_batchsize > 0) {
    p += fmt::format(",override-input-shape{{batch={}}}", o.override_batchsize);
  }
  p += ",freeze-initializer-inputs,infer-shapes,unique-parameters";
  p += o.preserve_qnt_ops ? ",fold-constants{skip-quantizers=1,shapes=1}" : ",fold-constants{qdq=1,shapes=1}";
  p += ",infer-shapes,fold-transpose-into-quant,infer-shapes,cleanup{merge-constants=0}";
  // qonnx names, extracts the bias and names again; naming once at the end gives the same names.
  if (o.extract_conv_bias) p += ",extract-conv-bias,infer-shapes";
  return p + ",readable-names";
}

int run_cleanup(CleanupOptions o) {
  if (o.check > 0 && (o.override_batchsize > 0 || !o.override_inpsize.empty()))
    return report(Status(Code::kUsage, "--check compares with the input's shapes: it cannot be combined with --override-*"));
  auto text = cleanup_pipeline(o);
  if (!text.is_ok()) return report(text.status());
  if (o.dump_pipeline) {
    std::printf("%s\n", text->c_str());
    return 0;
  }
  auto pipeline = pass::parse_pipeline(text.value());
  if (!pipeline.is_ok()) return report(pipeline.status());
  if (o.output.empty()) o.output = output_next_to_input(o.input, "_clean.onnx");
  if (Status st = refuse_to_overwrite_input(o.input, o.output, o.in_place); !st.is_ok()) return report(st);
  pass::PassContext ctx;
  auto ran = load_and_run(o.input, pipeline.value(), ctx);
  if (!ran.is_ok()) return report(ran.status());
  ir::Model model = std::move(ran).value();
  for (const auto& d : ctx.diagnostics())
    log::warn("[{}] {}{}", d.pass, d.node.empty() ? "" : "node '" + d.node + "': ", d.message);
  model.set_metadata("qonnx-cc.pipeline", text.value());
  // Cleanup only folds and renames: the result must compute the very same bits.
  if (o.check > 0)
    if (int code = exact_check(o.input, model, o.check, o.seed); code != 0) return code;
  if (Status st = save_result(model, o.output); !st.is_ok()) return report(st);
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
  auto o = std::make_shared<CleanupOptions>();
  cmd->add_option("MODEL", o->input, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output,--out-file", o->output, "Output model (default: MODEL's folder, <stem>_clean.onnx)");
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
  cmd->add_flag("--dump-pipeline", o->dump_pipeline, "Print the pass pipeline and stop");
  cmd->add_flag("--in-place", o->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, o] { exit_code = run_cleanup(*o); });
}

}  // namespace qonnx::cli
