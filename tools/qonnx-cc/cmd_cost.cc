// `cost`: qonnx-inference-cost (qonnx's preprocessing pipeline, then its cost model).
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "qonnx/analysis/inference_cost.h"
#include "qonnx/api/commands.h"
#include "qonnx/io/model_io.h"

namespace qonnx::cli {

namespace {

struct CostCommand {
  api::CostOptions cost;  // input_name: the input file
  std::string json, html, output_onnx;
  bool no_discount_sparsity = false;
};

int run_cost(CostCommand c) {
  api::CostOptions& o = c.cost;
  o.discount_sparsity = !c.no_discount_sparsity;
  auto loaded = io::load_model(o.input_name);
  if (!loaded.is_ok()) return report(loaded.status());
  auto costed = api::cost(std::move(loaded).value(), o);
  if (!costed.is_ok()) return report(costed.status());
  const std::string& json = costed->json;
  if (!c.output_onnx.empty())
    if (Status st = io::save_model(costed->preprocessed, c.output_onnx); !st.is_ok()) return report(st);
  if (!c.html.empty()) {
    const std::string title = std::filesystem::path(o.input_name).filename().string();
    if (Status st = io::write_file_atomic(c.html, analysis::cost_html(costed->cost, title)); !st.is_ok()) return report(st);
  }
  if (!c.json.empty() && c.json != "-") {
    if (Status st = io::write_file_atomic(c.json, json); !st.is_ok()) return report(st);
  } else if (c.json == "-" || c.html.empty()) {
    std::fwrite(json.data(), 1, json.size(), stdout);
  }
  return 0;
}

}  // namespace

void add_cost_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("cost", "Inference cost as qonnx-inference-cost computes it: MACs, BOPs, weight and activation memory");
  cmd->footer(
      "The model is first preprocessed as qonnx does (shapes, datatypes, every constant folded, quantizers\n"
      "included); then Conv, MatMul, Gemm and Upsample are costed per (input, weight) datatype pair:\n"
      "op_mac_<in>_<weight> MACs (zero weights discounted unless --no-discount-sparsity), mem_w_<type> weight\n"
      "elements, mem_o_<type> output elements; total_bops weighs MACs by both bit widths, total_mem_*_bits\n"
      "elements by theirs. Datatypes follow qonnx: INTk/UINTk/BIPOLAR for integer quantizers at unit scale,\n"
      "SCALEDINT<k> at another scale, FLOAT32 otherwise. Beyond qonnx, ConvTranspose, GlobalAveragePool,\n"
      "Resize and MultiThreshold are costed too (--qonnx-ops-only: reported as unsupported, as qonnx does).\n"
      "The JSON is qonnx's: keys sorted, indent 2, floats as Python prints them. Beyond qonnx, --breakdown adds\n"
      "each MatMul/Gemm/Conv's exact accumulator range and width over integer inputs (as `range` computes them).\n"
      "Example:\n"
      "  qonnx-cc cost TFC_2W2A.onnx --json cost.json --breakdown --html cost.html\n"
      "  qonnx-cc cost model_qcdq.onnx --clip-aware        (JSON on stdout)\n");
  auto c = std::make_shared<CostCommand>();
  api::CostOptions* o = &c->cost;
  cmd->add_option("MODEL", o->input_name, "Model file (.onnx)")->required();
  cmd->add_option("--json,--output-json", c->json, "Write the JSON here ('-': stdout; default: stdout unless --html)");
  cmd->add_flag("--breakdown,--cost-breakdown", o->breakdown, "Add per-op-type (optype_cost) and per-node (node_cost) tables, and the exact accumulator widths per layer "
                   "(node_accumulator, total_accumulator_bits)");
  cmd->add_flag("--no-discount-sparsity", c->no_discount_sparsity, "Count zero weights (qonnx's discount_sparsity=False)");
  cmd->add_flag("--flat", o->flat, "qonnx's 2021 layout: the totals at the top level, no total_cost wrapper");
  cmd->add_flag("--clip-aware", o->clip_aware,
                "QCDQ: a Clip with constant bounds gives the true bit width (qonnx counts Clip-narrowed int8 as 8 bits)");
  cmd->add_flag("--qonnx-ops-only", o->qonnx_ops_only, "Cost only the ops qonnx costs");
  cmd->add_option("--html", c->html, "Write a self-contained HTML page: totals, per-layer bars (MACs, weight bits, input/weight/accumulator bits), a layer table");
  cmd->add_option("--output-onnx", c->output_onnx, "Also save the preprocessed model (qonnx's output_onnx)");
  cmd->callback([&exit_code, c] { exit_code = run_cost(*c); });
}

}  // namespace qonnx::cli
