// `convert` and `list-passes`: api::convert on the loaded input, the result written atomically.
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/api/commands.h"
#include "qonnx/io/model_io.h"
#include "qonnx/pass/pass.h"
#include "qonnx/targets/target.h"

namespace qonnx::cli {

namespace {

// What `convert` parses: the library's options (input and output names included), and the file and
// printing steps that are the CLI's.
struct ConvertCommand {
  api::ConvertOptions convert;
  std::string report, external_data = "auto", print_ir_after, depfile, arith_text = "float";
  bool timing = false, stats = false, dump_pipeline = false, in_place = false;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int run_convert(ConvertCommand c) {
  const auto start = std::chrono::steady_clock::now();
  api::ConvertOptions& o = c.convert;
  auto canonical = api::convert_pipeline(o);
  if (!canonical.is_ok()) return report(canonical.status());
  if (c.dump_pipeline) {
    std::printf("%s\n", canonical->c_str());
    return 0;
  }
  const std::string& input = o.input_name;
  std::string& output = o.output_name;
  if (output.empty()) output = output_next_to_input(input, fmt::format(".{}.onnx", o.passes.empty() ? o.target : "converted"));
  if (Status st = refuse_to_overwrite_input(input, output, c.in_place); !st.is_ok()) return report(st);
  io::SaveOptions save;
  if (c.external_data == "always") save.external_data = io::ExternalData::kAlways;
  else if (c.external_data == "never") save.external_data = io::ExternalData::kNever;

  auto loaded = io::load_model(input);
  if (!loaded.is_ok()) return report(loaded.status());
  const auto input_data_files = io::external_data_files(loaded.value());
  const double load_secs = seconds_since(start);
  pass::PrintIrInstrumentation print_ir(c.print_ir_after);
  if (!c.print_ir_after.empty()) o.hooks.push_back(&print_ir);
  auto converted = api::convert(std::move(loaded).value(), o);
  if (!converted.is_ok()) return report(converted.status());
  const api::ConvertResult& result = converted.value();
  print_check_lines(result.check_lines);
  const auto save_start = std::chrono::steady_clock::now();
  if (!result.check_failed) {
    if (Status st = save_result(result.model, output, save); !st.is_ok()) return report(st);
  }
  const double save_secs = seconds_since(save_start);
  if (!c.report.empty()) {
    if (Status st = io::write_file_atomic(c.report, result.report_json); !st.is_ok()) return report(st);
  }
  if (c.timing) {
    std::fprintf(stderr, "timing: load %.4f s\n", load_secs);
    for (const auto& t : result.timings) std::fprintf(stderr, "timing: %-24s %.4f s%s\n", t.pass.c_str(), t.seconds, t.changed ? "" : " (no change)");
    std::fprintf(stderr, "timing: validate %.4f s\ntiming: save %.4f s\ntiming: total %.4f s\n", result.validate_seconds, save_secs,
                 seconds_since(start));
  }
  if (c.stats) print_pass_counters(result.counters);
  if (result.check_failed) return report_check_failure(result.check_failure);
  if (!c.depfile.empty()) {
    std::string line = fmt::format("{}: {}", output, input);
    for (const auto& f : input_data_files) line += " " + f.string();
    line += "\n";
    if (Status st = io::write_file_atomic(c.depfile, line); !st.is_ok()) return report(st);
  }
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("convert", "Run a pass pipeline and write the transformed model");
  cmd->footer(
      "Examples:\n"
      "  qonnx-cc convert model.onnx --check 8                  # QONNX -> QuantizeLinear/Clip/DequantizeLinear\n"
      "  qonnx-cc convert model_qdq.onnx --target qonnx --check 8 --report r.json\n"
      "      QCDQ -> QONNX (qonnx-convert): QuantizeLinear -> [Clip] -> DequantizeLinear chains and\n"
      "      DequantizeLinear on integer initializers become Quant nodes; the bit width and narrow flag come\n"
      "      from the Clip bounds ([-7, 7] int8: 4-bit signed narrow), a missing zero point is 0, per-axis\n"
      "      scales keep their axis. Only exact chains convert; the others stay and are listed (warnings,\n"
      "      --report diagnostics, --stats).");
  auto c = std::make_shared<ConvertCommand>();
  api::ConvertOptions* o = &c->convert;
  cmd->add_option("MODEL", o->input_name, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output_name, "Output model (default: MODEL's folder, <stem>.<target>.onnx)");
  cmd->add_option("--target", o->target, "Named pipeline")
      ->check(CLI::IsMember(targets::TargetRegistry::global().names()))
      ->default_val("qdq");
  cmd->add_option("--passes", o->passes, "Textual pipeline, e.g. 'fold-constants,cleanup' (overrides --target)");
  cmd->add_flag("--strict", o->strict,
                "A quantizer that cannot be lowered exactly, any QONNX op left in a qdq/ngraph/ascend result, or an op "
                "unknown to ONNX and qonnx-cc is an error (exit 6, nothing written); without it they are warnings");
  cmd->add_flag("--keep-initializer-inputs", o->keep_initializer_inputs,
                "Keep initializers that are also graph inputs (IR < 4 style) as overridable inputs; by default they "
                "are constants, as onnxruntime treats them, and leave the graph inputs. Passes do not fold or lower "
                "through kept ones");
  cmd->add_flag("--allow-approximate", o->allow_approximate,
                "Allow QuantizeLinear forms that can differ from QONNX on rare ties (non-zero zero points); reported");
  cmd->add_option("--target-opset", o->target_opset,
                  "Default-domain opset of the output (13..21; fold/qonnx keep the model's unless given; above 17 "
                  "qonnx-cc's own adapters take the last steps, docs/opset18-21.md). A model already above it keeps "
                  "its opset")
      ->check(CLI::Range(13, 21));
  cmd->add_option("--round-mode", o->round_mode, "Ascend scale rounding to FP19: 1 round half to even (default: closer to the original, docs/ascend.md), 0 truncate")
      ->check(CLI::IsMember({"0", "1"}));
  cmd->add_option("--max-multithreshold-bits", o->max_multithreshold_bits,
                  "finn: activation quantizers of more bits stay Quant (2^N - 1 thresholds per channel; default 8, "
                  "as FINN's max_multithreshold_bit_width)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--check", o->check, "Compare original and result on N seeded random inputs (exit 7 on mismatch)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed for --check")->default_val(0);
  cmd->add_option("--atol", o->atol,
                  "Absolute tolerance for --check (ascend: bounds the FP19 deviation from the original, which is "
                  "otherwise reported only; the rewrite itself is checked exactly)")->default_val(1e-6);
  cmd->add_option("--rtol", o->rtol, "Relative tolerance for --check (ascend: as --atol)")->default_val(1e-5);
  cmd->add_option("--arith", c->arith_text,
                  "How --check runs Conv/MatMul/Gemm between quantized operands in both models: float or int (as "
                  "exec --arith)")
      ->default_val("float")->check(CLI::IsMember({"int", "float"}));
  cmd->add_option("--report", c->report, "Write a JSON report: passes, counters, every quantizer's outcome, check");
  cmd->add_option("--external-data", c->external_data, "auto | always | never")
      ->check(CLI::IsMember({"auto", "always", "never"}))->default_val("auto");
  cmd->add_flag("--timing", c->timing, "Print load, per-pass and save times to stderr");
  cmd->add_flag("--stats", c->stats, "Print per-pass counters to stderr");
  cmd->add_flag("--dump-pipeline", c->dump_pipeline, "Print the pipeline that would run, and stop");
  cmd->add_option("--print-ir-after", c->print_ir_after, "Print the graph (ONNX text) after PASS, or 'all'");
  cmd->add_option("--depfile", c->depfile, "Write a make-style dependency line for the output");
  cmd->add_flag("--in-place", c->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, c, o, cmd] {
    o->tolerance_given = cmd->count("--atol") > 0 || cmd->count("--rtol") > 0;
    qonnx::exec::parse_arithmetic(c->arith_text, &o->arithmetic);  // CLI::IsMember admitted only int and float
    exit_code = run_convert(*c);
  });
}

void add_list_passes_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list-passes", "List passes with their options, and the named targets");
  cmd->callback([&exit_code] {
    const auto& registry = pass::PassRegistry::global();
    for (const auto& name : registry.names()) {
      auto p = registry.create(name);
      std::printf("%s\n    %s\n", name.c_str(), p->summary().c_str());
      for (const auto& opt : p->options())
        std::printf("    {%s=%s}  %s (%s)\n", opt.name.c_str(), opt.default_value.c_str(), opt.help.c_str(), opt.type.c_str());
      for (const pass::Statistic* s : p->statistics()) std::printf("    stat %s: %s\n", s->name().c_str(), s->help().c_str());
    }
    std::printf("\ntargets (--target):\n");
    for (const auto& t : targets::TargetRegistry::global().names())
      std::printf("  %-8s %s\n", t.c_str(), targets::pipeline_text(t).value().c_str());
    exit_code = 0;
  });
}

}  // namespace qonnx::cli
