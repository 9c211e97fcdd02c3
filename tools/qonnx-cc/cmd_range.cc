// `range`: sound value ranges of every tensor and exact integer accumulator ranges (issue 25).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.h"
#include "qonnx/analysis/range.h"
#include "qonnx/analysis/range_report.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"

namespace qonnx::cli {

namespace {

struct RangeCommand {
  std::string model;
  std::vector<std::string> input_ranges;  // NAME=LO,HI
  bool per_channel = false;
  bool json = false;
  std::string witness_dir;  // --witness DIR
  std::string annotate;     // --annotate OUT.onnx
  std::string report_mode = "range";
  std::string key_filter;
  std::string html;  // FILE for the HTML page
};

Result<analysis::Interval> parse_range(const std::string& text, std::string* name) {
  const size_t eq = text.rfind('=');
  const size_t comma = text.rfind(',');
  if (eq == std::string::npos || comma == std::string::npos || comma < eq)
    return Status(Code::kUsage, "--input-range '" + text + "': expected NAME=LO,HI");
  *name = text.substr(0, eq);
  try {
    size_t used_lo = 0, used_hi = 0;
    const std::string lo = text.substr(eq + 1, comma - eq - 1), hi = text.substr(comma + 1);
    analysis::Interval r{std::stod(lo, &used_lo), std::stod(hi, &used_hi)};
    if (used_lo != lo.size() || used_hi != hi.size() || !(r.lo <= r.hi))
      return Status(Code::kUsage, "--input-range '" + text + "': LO and HI must be numbers with LO <= HI");
    return r;
  } catch (const std::exception&) {
    return Status(Code::kUsage, "--input-range '" + text + "': LO and HI must be numbers");
  }
}

int run_range(const RangeCommand& c) {
  analysis::ReportOptions report_options{analysis::ReportMode::kRange, c.per_channel, c.key_filter};
  if (auto mode = analysis::parse_report_mode(c.report_mode)) {
    report_options.mode = *mode;
  } else {
    return report(Status(Code::kUsage, "--report-mode '" + c.report_mode +
                                           "': expected range, stuck_channel or zerostuck_channel"));
  }
  analysis::RangeOptions options;
  for (const std::string& text : c.input_ranges) {
    std::string name;
    auto r = parse_range(text, &name);
    if (!r.is_ok()) return report(r.status());
    options.input_ranges[name] = r.value();
  }
  auto loaded = io::load_model(c.model);
  if (!loaded.is_ok()) return report(loaded.status());
  ir::Model model = std::move(loaded).value();
  for (const auto& [name, r] : options.input_ranges) {
    bool found = false;
    for (const ir::Value* in : model.graph().runtime_inputs()) found = found || in->name() == name;
    if (!found) return report(Status(Code::kUsage, "--input-range: '" + name + "' is not an input of the model"));
  }
  // Shapes give the channel counts of intermediate tensors (per-channel ranges).
  auto items = pass::parse_pipeline("infer-shapes");
  if (!items.is_ok()) return report(items.status());
  pass::PassContext ctx;
  if (auto ran = pass::run_pipeline(model, items.value(), ctx); !ran.is_ok()) return report(ran.status());
  auto analyzed = analysis::analyze_ranges(model, options);
  if (!analyzed.is_ok()) return report(analyzed.status());
  // Every accumulator bound is checked by running a witness; --witness keeps the inputs.
  auto witnesses = analysis::check_witnesses(model, analyzed.value(), c.witness_dir);
  if (!witnesses.is_ok()) return report(witnesses.status());
  if (!c.annotate.empty()) {
    // The file as loaded (without the inferred shapes) gets the annotations.
    auto original = io::load_model(c.model);
    if (!original.is_ok()) return report(original.status());
    analysis::annotate_ranges(original.value(), analyzed.value());
    if (Status st = io::save_model(original.value(), c.annotate); !st.is_ok()) return report(st);
  }
  if (!c.html.empty()) {
    const std::string title = std::filesystem::path(c.model).filename().string();
    if (Status st = io::write_file_atomic(c.html, analysis::range_html(analyzed.value(), title)); !st.is_ok()) return report(st);
    if (!c.json) return 0;  // the page instead of the text report
  }
  std::string out;
  if (c.json) {
    auto json = analysis::range_json(model.graph(), analyzed.value(), report_options);
    if (!json.is_ok()) return report(json.status());
    out = std::move(json).value();
  } else {
    out = analysis::range_text(model.graph(), analyzed.value(), report_options);
  }
  if (!c.json && !c.witness_dir.empty()) {
    out += "\nwitnesses:\n";
    for (const analysis::Witness& w : witnesses.value()) {
      const analysis::Accumulator& acc = analyzed->accumulators[w.accumulator];
      const std::string layer = acc.node.empty() ? acc.output : acc.node;
      if (w.attained)
        out += fmt::format("{} {} {}: {} (channel {}, {} = {})\n", layer, w.max ? "max" : "min", w.bound, w.dir,
                           w.channel, acc.output, w.value);
      else
        out += fmt::format("{} {} {}: bound, not attained ({})\n", layer, w.max ? "max" : "min", w.bound, w.why);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_range_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("range", "Sound value ranges of every tensor and exact accumulator bit widths");
  cmd->footer(
      "Every tensor's interval (never narrower than any execution on inputs in the given ranges), the\n"
      "integer form (integer range, scale, zero point) of quantized tensors, and for MatMul/Gemm/Conv over\n"
      "integer-valued inputs the exact accumulator range per output channel and its bit width. Input\n"
      "ranges: --input-range, else the input's finn_datatype annotation, else its type's range. An op the\n"
      "analysis does not bound gets its type's whole range and a note. Each accumulator bound is checked\n"
      "by building an input that reaches it and running the executor: \"attained\", or \"bound, not\n"
      "attained\" and why. MultiThreshold: the bit width of its thresholds as integers over its input's\n"
      "range.\n"
      "--report-mode as qonnx-range-analysis: range (default), stuck_channel (channels of node outputs\n"
      "whose every value is one constant over the input ranges) or zerostuck_channel (constantly 0).\n"
      "--json writes qonnx's report shape (range: {tensor: [lo, hi] or [[lo per channel], [hi per\n"
      "channel]]}; stuck_channel: {tensor: [[channel, value], ...]}; zerostuck_channel: {tensor:\n"
      "[channel, ...]}) plus the key \"@qonnx-cc\" with integer forms, accumulators, thresholds and notes.\n"
      "See docs/range.md.\n"
      "Example:\n"
      "  qonnx-cc range TFC_2W2A.onnx --input-range global_in=0,1 --per-channel --json\n"
      "  qonnx-cc range CNV_2W2A.onnx --input-range global_in=0,1 --report-mode stuck_channel --key-filter Quant\n"
      "  qonnx-cc range TFC_2W2A.onnx --witness wit --annotate TFC_annotated.onnx\n"
      "  qonnx-cc exec TFC_2W2A.onnx --input-dir wit/MatMul_0_max --expose MatMul_0_out0\n"
      "  qonnx-cc range TFC_2W2A.onnx --html ranges.html\n");
  auto c = std::make_shared<RangeCommand>();
  cmd->add_option("MODEL", c->model, "Model file (.onnx)")->required();
  cmd->add_option("--input-range", c->input_ranges, "NAME=LO,HI: the range of a graph input (repeatable)");
  cmd->add_flag("--per-channel", c->per_channel, "Also print ranges per channel (axis 1)");
  cmd->add_flag("--json", c->json, "JSON instead of text (qonnx-range-analysis's shape, plus \"@qonnx-cc\")");
  cmd->add_option("--report-mode", c->report_mode, "range (default), stuck_channel or zerostuck_channel");
  cmd->add_option("--key-filter", c->key_filter, "Only tensors (and accumulators) whose name contains this");
  cmd->add_option("--witness", c->witness_dir,
                  "Write DIR/<layer>_<min|max>/input_K.pb: an input reaching each accumulator bound (checked by running it)");
  cmd->add_option("--annotate", c->annotate,
                  "Write the model with finn_datatype annotations (accumulator outputs, MultiThreshold inputs and thresholds)");
  cmd->add_option("--html", c->html,
                  "Write a self-contained HTML page: accumulator widths, tensor intervals and integer forms as charts, "
                  "and tables (no text report then, unless --json)");
  cmd->callback([&exit_code, c] { exit_code = run_range(*c); });
}

}  // namespace qonnx::cli
