// `convert` and `list-passes`: run a pass pipeline and write the transformed model atomically.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "qonnx/passes/quantizer_outcomes.h"
#include "commands.h"
#include "pipeline_flow.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/io/model_io.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/json.h"
#include "qonnx/support/log.h"
#include "qonnx/targets/target.h"

namespace qonnx::cli {

namespace {

struct ConvertOptions {
  std::string input, output, target = "qdq", passes, report, external_data = "auto", print_ir_after, depfile;
  int check = 0;
  std::string round_mode;  // --round-mode: sets ascend-quant-matmul{round-mode=...}
  bool strict = false, allow_approximate = false;  // lower-quant{strict=1}, {allow-approximate=1}
  bool keep_initializer_inputs = false;            // freeze-initializer-inputs{keep=1}
  int target_opset = 0;                            // upgrade-opset{version=N}
  uint64_t seed = 0;
  double atol = 1e-6, rtol = 1e-5;
  bool tolerance_given = false;  // --atol or --rtol on the command line
  bool timing = false, stats = false, dump_pipeline = false, in_place = false;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string default_output(const ConvertOptions& o) {
  return output_next_to_input(o.input, fmt::format(".{}.onnx", o.passes.empty() ? o.target : "converted"));
}

// QONNX ops still in a result meant for standard ONNX runtimes, each with why it was left.
std::vector<std::string> qonnx_ops_left(const ir::Model& model, const pass::PassContext& ctx) {
  std::vector<std::string> left;
  for (const auto& n : model.graph().nodes()) {
    const dialect::Op op = dialect::classify(*n);
    if (op == dialect::Op::kNone) continue;
    std::string why = op == dialect::Op::kFloatQuant && model.opset("").value_or(1) < 19
                          ? "float8 QuantizeLinear/DequantizeLinear need opset 19: --target-opset 19..21"
                          : "";
    for (const auto& r : passes::quantizer_outcomes(ctx))
      if (r.node == n->name() && r.outcome == "left") why = r.detail;
    left.push_back(why.empty() ? n->describe() : fmt::format("{} ({})", n->describe(), why));
  }
  return left;
}

std::string make_report(const ConvertOptions& o, const std::string& pipeline, const pass::PassContext& ctx,
                        const std::vector<pass::PassTiming>& timings, const std::vector<analysis::QuantNodeInfo>& quantizers,
                        const std::vector<std::pair<std::string, analysis::OutputCheck>>& checks) {
  JsonWriter w;
  w.begin_object();
  w.key("input").value(o.input).key("output").value(o.output).key("pipeline").value(pipeline);
  w.key("passes").begin_array();
  for (const auto& t : timings) {
    w.begin_object().key("pass").value(t.pass).key("changed").value(t.changed).key("seconds").value(t.seconds);
    w.end_object();
  }
  w.end_array();
  w.key("counters").begin_object();
  for (const auto& [pass, counters] : ctx.counters()) {
    w.key(pass).begin_object();
    for (const auto& [k, v] : counters) w.key(k).value(v);
    w.end_object();
  }
  w.end_object();
  w.key("quantizers").begin_array();
  for (const auto& q : quantizers) {
    w.begin_object().key("node").value(q.name).key("op_type").value(q.op_type);
    std::string outcome = "left", detail = "not constant: kept for the runtime", by;
    for (const auto& r : passes::quantizer_outcomes(ctx))
      if (r.node == q.name) {
        outcome = r.outcome;
        detail = r.detail;
        by = r.pass;
      }
    w.key("outcome").value(outcome).key("detail").value(detail);
    if (!by.empty()) w.key("pass").value(by);
    w.end_object();
  }
  w.end_array();
  w.key("diagnostics").begin_array();
  for (const auto& d : ctx.diagnostics())
    w.begin_object().key("pass").value(d.pass).key("node").value(d.node).key("message").value(d.message).end_object();
  w.end_array();
  w.key("check").begin_array();
  for (const auto& [against, c] : checks) {
    w.begin_object().key("output").value(c.name).key("against").value(against).key("ok").value(c.ok);
    w.key("max_abs_error").value(c.max_abs_error);
    w.key("max_rel_error").value(c.max_rel_error).key("mismatches").value(c.mismatches).key("elements").value(c.elements);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

// ONNX's checker and strict type and shape inference after every pass that changed the model.
class StrictTypeCheck : public pass::Instrumentation {
 public:
  Status after_pass(const pass::Pass& pass, const ir::Model& model, bool changed) override {
    if (!changed || model.opset("").value_or(1) > onnxlib::onnx_library_opset()) return Status::ok();
    Status st = onnxlib::onnx_check_types(model);
    if (st.is_ok()) return st;
    failed_ = true;
    return Status(Code::kFailed, fmt::format("the model it leaves fails ONNX's strict type and shape check: {}", st.message()));
  }
  // Whether the pipeline stopped because of this check (not because of a pass's own error).
  bool failed() const { return failed_; }

 private:
  bool failed_ = false;
};

// The pass after which the result first fails ONNX's strict type check: the pipeline runs again from
// the input with the check after every pass that changed the model (only when the final check
// failed, so a conversion that passes pays for one check).
Status blame_type_error(const ConvertOptions& o, const std::vector<pass::PipelineItem>& pipeline, Status final_error) {
  auto model = io::load_model(o.input);
  if (!model.is_ok()) return final_error;
  if (Status st = onnxlib::onnx_check_types(model.value()); !st.is_ok())
    return Status(Code::kInvalidModel, fmt::format("the input already fails ONNX's strict type and shape check: {}", st.message()));
  pass::PassContext ctx;
  StrictTypeCheck check;
  auto ran = pass::run_pipeline(model.value(), pipeline, ctx, {&check});
  if (!ran.is_ok() && check.failed()) return std::move(ran).status();
  return final_error;
}

// Independent validation of what convert writes: ONNX's checker with strict type and shape
// inference, where the installed library knows the opset.
Status validate_result(const ConvertOptions& o, const std::vector<pass::PipelineItem>& pipeline, const ir::Model& model) {
  int64_t opset = model.opset("").value_or(1);
  if (opset > onnxlib::onnx_library_opset()) {
    log::info("ONNX strict type check of the result skipped: the installed ONNX library knows opsets <= {}, the result uses {} "
              "(qonnx-cc's structural verifier checked it after every pass)",
              onnxlib::onnx_library_opset(), opset);
    return Status::ok();
  }
  Status st = onnxlib::onnx_check_types(model);
  if (st.is_ok()) return st;
  return blame_type_error(o, pipeline,
                          Status(Code::kFailed, fmt::format("the result fails ONNX's strict type and shape check: {}", st.message())));
}

int run_convert(ConvertOptions o) {
  auto start = std::chrono::steady_clock::now();
  const targets::TargetRegistry& target_registry = targets::TargetRegistry::global();
  const targets::Target* target = o.passes.empty() ? target_registry.find(o.target) : nullptr;
  if (o.passes.empty() && !target) return report(Status(Code::kUsage, fmt::format("unknown target '{}'", o.target)));
  auto pipeline = target ? target->pipeline({o.target_opset}, pass::PassRegistry::global()) : pass::parse_pipeline(o.passes);
  if (!pipeline.is_ok()) return report(pipeline.status());
  // The check of a hand-written pipeline: its owner's (ascend-quant-matmul: the FP19 reference), else
  // the default output comparison.
  const targets::Target* checker = target ? target : target_registry.owner_of(pipeline.value());
  // Shortcut flags set an option of every entry of their pass, inside fixpoint groups too.
  auto set_option = [&](const char* flag, const char* pass, const char* key, const std::string& value) {
    auto used = pass::set_pass_option(pipeline.value(), pass, key, value);
    if (!used.is_ok()) return std::move(used).status();
    if (used.value() > 0) return Status::ok();
    return Status(Code::kUsage, fmt::format("{} applies to pipelines with {}", flag, pass));
  };
  std::vector<Status> flag_errors;
  if (!o.round_mode.empty()) flag_errors.push_back(set_option("--round-mode", "ascend-quant-matmul", "round-mode", o.round_mode));
  // --strict also makes unknown ops an error, so it applies to pipelines without lower-quant too.
  if (o.strict) flag_errors.push_back(pass::set_pass_option(pipeline.value(), "lower-quant", "strict", "1").status());
  if (o.keep_initializer_inputs)
    flag_errors.push_back(set_option("--keep-initializer-inputs", "freeze-initializer-inputs", "keep", "1"));
  if (o.allow_approximate) flag_errors.push_back(set_option("--allow-approximate", "lower-quant", "allow-approximate", "1"));
  if (o.target_opset > 0 && !o.passes.empty())
    flag_errors.push_back(set_option("--target-opset", "upgrade-opset", "version", std::to_string(o.target_opset)));
  for (const Status& st : flag_errors)
    if (!st.is_ok()) return report(st);
  std::string canonical = pass::format_pipeline(pipeline.value());
  if (o.dump_pipeline) {
    std::printf("%s\n", canonical.c_str());
    return 0;
  }
  if (o.output.empty()) o.output = default_output(o);
  if (Status st = refuse_to_overwrite_input(o.input, o.output, o.in_place); !st.is_ok()) return report(st);
  io::SaveOptions save;
  if (o.external_data == "always") save.external_data = io::ExternalData::kAlways;
  else if (o.external_data == "never") save.external_data = io::ExternalData::kNever;

  auto loaded = io::load_model(o.input);
  if (!loaded.is_ok()) return report(loaded.status());
  ir::Model model = std::move(loaded).value();
  // --check compares with the input as loaded: a copy made now (initializer data shared, not re-read).
  std::optional<ir::Model> original;
  if (o.check > 0) original = model.clone();
  double load_secs = seconds_since(start);
  auto quantizers = analysis::summarize(model).quant_nodes;
  if (auto unknown = analysis::unknown_ops(model); !unknown.empty()) {
    std::string what = fmt::format("{} op(s) unknown to ONNX and to qonnx-cc: {}; passes leave them as they are and "
                                   "exec (and so --check) cannot run them", unknown.size(), fmt::join(unknown, ", "));
    if (o.strict) return report(Status(Code::kUnsupported, what + "; nothing written (--strict)").with_context(o.input));
    log::warn("{}: {} (--strict makes this an error)", o.input, what);
  }
  const auto input_data_files = io::external_data_files(model);

  pass::PassContext ctx;
  pass::TimingInstrumentation timing;
  pass::PrintIrInstrumentation print_ir(o.print_ir_after);
  std::vector<pass::Instrumentation*> hooks = {&timing};
  if (!o.print_ir_after.empty()) hooks.push_back(&print_ir);
  if (Status st = run_on_input(model, o.input, pipeline.value(), ctx, hooks); !st.is_ok()) return report(st);
  if (target && target->standard_onnx_result()) {
    // A QONNX op in a qdq/ngraph/ascend result makes it unloadable for onnxruntime: never silent.
    if (auto left = qonnx_ops_left(model, ctx); !left.empty()) {
      std::string what = fmt::format("the {} result still holds {} QONNX op(s) that standard ONNX runtimes cannot run: {}",
                                     o.target, left.size(), fmt::join(left, "; "));
      if (o.strict) return report(Status(Code::kUnsupported, what + "; nothing written (--strict)").with_context(o.input));
      log::warn("{} (written anyway; --strict makes this an error)", what);
    }
  }
  model.set_metadata("qonnx-cc.pipeline", canonical);
  model.set_metadata("qonnx-cc.version", QONNX_CC_VERSION);
  auto validate_start = std::chrono::steady_clock::now();
  if (Status st = validate_result(o, pipeline.value(), model); !st.is_ok()) return report(std::move(st).with_context(o.input));
  double validate_secs = seconds_since(validate_start);

  targets::CheckOutcome checked;
  if (o.check > 0) {
    targets::CheckRequest request{o.check, o.seed, o.atol, o.rtol, o.tolerance_given, &pipeline.value(),
                                  [&]() -> Result<ir::Model> { return original->clone(); }};
    auto outcome = checker ? checker->check(model, request) : targets::check_outputs_match(model, request);
    if (!outcome.is_ok()) return report(outcome.status());
    checked = std::move(outcome).value();
    for (const std::string& line : checked.lines) std::printf("%s\n", line.c_str());
  }
  const bool check_failed = checked.failed;
  auto save_start = std::chrono::steady_clock::now();
  if (!check_failed) {
    if (Status st = save_result(model, o.output, save); !st.is_ok()) return report(st);
  }
  double save_secs = seconds_since(save_start);
  if (!o.report.empty()) {
    std::string json = make_report(o, canonical, ctx, timing.timings(), quantizers, checked.checks);
    if (Status st = io::write_file_atomic(o.report, json); !st.is_ok()) return report(st);
  }
  if (o.timing) {
    std::fprintf(stderr, "timing: load %.4f s\n", load_secs);
    for (const auto& t : timing.timings()) std::fprintf(stderr, "timing: %-24s %.4f s%s\n", t.pass.c_str(), t.seconds, t.changed ? "" : " (no change)");
    std::fprintf(stderr, "timing: validate %.4f s\ntiming: save %.4f s\ntiming: total %.4f s\n", validate_secs, save_secs,
                 seconds_since(start));
  }
  if (o.stats) print_pass_counters(ctx);
  if (check_failed) {
    std::fprintf(stderr, "qonnx-cc: error: --check: %s; nothing written\n", checked.failure.c_str());
    return exit_code(Code::kMismatch);
  }
  if (!o.depfile.empty()) {
    std::string line = fmt::format("{}: {}", o.output, o.input);
    for (const auto& f : input_data_files) line += " " + f.string();
    line += "\n";
    if (Status st = io::write_file_atomic(o.depfile, line); !st.is_ok()) return report(st);
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
  auto o = std::make_shared<ConvertOptions>();
  cmd->add_option("MODEL", o->input, "Input model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output, "Output model (default: MODEL's folder, <stem>.<target>.onnx)");
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
  cmd->add_option("--check", o->check, "Compare original and result on N seeded random inputs (exit 7 on mismatch)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "Seed for --check")->default_val(0);
  cmd->add_option("--atol", o->atol,
                  "Absolute tolerance for --check (ascend: bounds the FP19 deviation from the original, which is "
                  "otherwise reported only; the rewrite itself is checked exactly)")->default_val(1e-6);
  cmd->add_option("--rtol", o->rtol, "Relative tolerance for --check (ascend: as --atol)")->default_val(1e-5);
  cmd->add_option("--report", o->report, "Write a JSON report: passes, counters, every quantizer's outcome, check");
  cmd->add_option("--external-data", o->external_data, "auto | always | never")
      ->check(CLI::IsMember({"auto", "always", "never"}))->default_val("auto");
  cmd->add_flag("--timing", o->timing, "Print load, per-pass and save times to stderr");
  cmd->add_flag("--stats", o->stats, "Print per-pass counters to stderr");
  cmd->add_flag("--dump-pipeline", o->dump_pipeline, "Print the pipeline that would run, and stop");
  cmd->add_option("--print-ir-after", o->print_ir_after, "Print the graph (ONNX text) after PASS, or 'all'");
  cmd->add_option("--depfile", o->depfile, "Write a make-style dependency line for the output");
  cmd->add_flag("--in-place", o->in_place, "Allow -o to name the input file");
  cmd->callback([&exit_code, o, cmd] {
    o->tolerance_given = cmd->count("--atol") > 0 || cmd->count("--rtol") > 0;
    exit_code = run_convert(*o);
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
