// `convert`: a target's pipeline (or a hand-written one) with the shortcut options, ONNX's strict type
// check of the result, the target's --check, and the --report JSON.
#include <chrono>

#include <fmt/format.h>

#include "api/input_context.h"
#include "qonnx/analysis/summary.h"
#include "qonnx/analysis/validate.h"
#include "qonnx/api/commands.h"
#include "qonnx/dialect/qonnx_dialect.h"
#include "qonnx/onnxlib/onnx_library.h"
#include "qonnx/passes/quantizer_outcomes.h"
#include "qonnx/support/json.h"
#include "qonnx/support/log.h"
#include "qonnx/targets/target.h"

namespace qonnx::api {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct ConvertPipeline {
  std::vector<pass::PipelineItem> items;
  const targets::Target* target = nullptr;   // nullptr for a hand-written pipeline
  const targets::Target* checker = nullptr;  // whose --check applies; nullptr: the default comparison
  std::string text;                          // canonical
};

Result<ConvertPipeline> build_pipeline(const ConvertOptions& o) {
  const targets::TargetRegistry& target_registry = targets::TargetRegistry::global();
  ConvertPipeline p;
  if (o.passes.empty()) {
    p.target = target_registry.find(o.target);
    if (!p.target) return Status(Code::kUsage, fmt::format("unknown target '{}'", o.target));
    QONNX_ASSIGN_OR_RETURN(p.items, p.target->pipeline({o.target_opset}, pass::PassRegistry::global()));
  } else {
    QONNX_ASSIGN_OR_RETURN(p.items, pass::parse_pipeline(o.passes));
  }
  // The check of a hand-written pipeline: its owner's (ascend-quant-matmul: the FP19 reference), else
  // the default output comparison.
  p.checker = p.target ? p.target : target_registry.owner_of(p.items);
  // Shortcut options set an option of every entry of their pass, inside fixpoint groups too.
  auto set_option = [&](const char* flag, const char* pass, const char* key, const std::string& value) {
    auto used = pass::set_pass_option(p.items, pass, key, value);
    if (!used.is_ok()) return std::move(used).status();
    if (used.value() > 0) return Status::ok();
    return Status(Code::kUsage, fmt::format("{} applies to pipelines with {}", flag, pass));
  };
  std::vector<Status> flag_errors;
  if (!o.round_mode.empty()) flag_errors.push_back(set_option("--round-mode", "ascend-quant-matmul", "round-mode", o.round_mode));
  // --strict also makes unknown ops an error, so it applies to pipelines without lower-quant too.
  if (o.strict) {
    flag_errors.push_back(pass::set_pass_option(p.items, "lower-quant", "strict", "1").status());
    flag_errors.push_back(pass::set_pass_option(p.items, "quant-act-to-multithreshold", "strict", "1").status());
  }
  if (o.max_multithreshold_bits > 0)
    flag_errors.push_back(set_option("--max-multithreshold-bits", "quant-act-to-multithreshold", "max-bits",
                                     std::to_string(o.max_multithreshold_bits)));
  if (o.keep_initializer_inputs)
    flag_errors.push_back(set_option("--keep-initializer-inputs", "freeze-initializer-inputs", "keep", "1"));
  if (o.allow_approximate) flag_errors.push_back(set_option("--allow-approximate", "lower-quant", "allow-approximate", "1"));
  if (o.target_opset > 0 && !o.passes.empty())
    flag_errors.push_back(set_option("--target-opset", "upgrade-opset", "version", std::to_string(o.target_opset)));
  for (Status& st : flag_errors)
    if (!st.is_ok()) return std::move(st);
  p.text = pass::format_pipeline(p.items);
  return p;
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
  w.key("input").value(o.input_name).key("output").value(o.output_name).key("pipeline").value(pipeline);
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
Status blame_type_error(const ir::Model& input, const std::vector<pass::PipelineItem>& pipeline, Status final_error) {
  if (Status st = onnxlib::onnx_check_types(input); !st.is_ok())
    return Status(Code::kInvalidModel, fmt::format("the input already fails ONNX's strict type and shape check: {}", st.message()));
  ir::Model model = input.clone();
  pass::PassContext ctx;
  StrictTypeCheck check;
  auto ran = pass::run_pipeline(model, pipeline, ctx, {&check});
  if (!ran.is_ok() && check.failed()) return std::move(ran).status();
  return final_error;
}

// Independent validation of the result: ONNX's checker with strict type and shape inference, where
// the installed library knows the opset.
Status validate_result(const ir::Model& model, const ir::Model& input, const std::vector<pass::PipelineItem>& pipeline) {
  int64_t opset = model.opset("").value_or(1);
  if (opset > onnxlib::onnx_library_opset()) {
    log::info("ONNX strict type check of the result skipped: the installed ONNX library knows opsets <= {}, the result uses {} "
              "(qonnx-cc's structural verifier checked it after every pass)",
              onnxlib::onnx_library_opset(), opset);
    return Status::ok();
  }
  Status st = onnxlib::onnx_check_types(model);
  if (st.is_ok()) return st;
  return blame_type_error(input, pipeline,
                          Status(Code::kFailed, fmt::format("the result fails ONNX's strict type and shape check: {}", st.message())));
}

// "NAME: what" for a log line, or just "what" for a model without a name.
std::string named(const std::string& input_name, const std::string& what) {
  return input_name.empty() ? what : fmt::format("{}: {}", input_name, what);
}

}  // namespace

Result<std::string> convert_pipeline(const ConvertOptions& options) {
  QONNX_ASSIGN_OR_RETURN(ConvertPipeline pipeline, build_pipeline(options));
  return pipeline.text;
}

Result<ConvertResult> convert(ir::Model model, const ConvertOptions& o) {
  QONNX_ASSIGN_OR_RETURN(ConvertPipeline pipeline, build_pipeline(o));
  // --check and the search for the pass that broke ONNX's type check start from the input as given: a
  // copy made now (initializer data shared, not copied).
  const ir::Model input = model.clone();
  const auto quantizers = analysis::summarize(model).quant_nodes;
  if (auto unknown = analysis::unknown_ops(model); !unknown.empty()) {
    std::string what = fmt::format("{} op(s) unknown to ONNX and to qonnx-cc: {}; passes leave them as they are and "
                                   "exec (and so --check) cannot run them", unknown.size(), fmt::join(unknown, ", "));
    if (o.strict) return with_input(Status(Code::kUnsupported, what + "; nothing written (--strict)"), o.input_name);
    log::warn("{} (--strict makes this an error)", named(o.input_name, what));
  }

  pass::PassContext ctx;
  pass::TimingInstrumentation timing;
  std::vector<pass::Instrumentation*> hooks = {&timing};
  hooks.insert(hooks.end(), o.hooks.begin(), o.hooks.end());
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, pipeline.items, ctx, hooks).status(), o.input_name));
  if (pipeline.target && pipeline.target->standard_onnx_result()) {
    // A QONNX op in a qdq/ngraph/ascend result makes it unloadable for onnxruntime: never silent.
    if (auto left = qonnx_ops_left(model, ctx); !left.empty()) {
      std::string what = fmt::format("the {} result still holds {} QONNX op(s) that standard ONNX runtimes cannot run: {}",
                                     o.target, left.size(), fmt::join(left, "; "));
      if (o.strict) return with_input(Status(Code::kUnsupported, what + "; nothing written (--strict)"), o.input_name);
      log::warn("{} (written anyway; --strict makes this an error)", what);
    }
  }
  model.set_metadata("qonnx-cc.pipeline", pipeline.text);
  model.set_metadata("qonnx-cc.version", QONNX_VERSION);
  const auto validate_start = std::chrono::steady_clock::now();
  QONNX_RETURN_IF_ERROR(with_input(validate_result(model, input, pipeline.items), o.input_name));
  const double validate_seconds = seconds_since(validate_start);

  targets::CheckOutcome checked;
  if (o.check > 0) {
    targets::CheckRequest request{o.check, o.seed, o.atol, o.rtol, o.tolerance_given, o.arithmetic, &pipeline.items,
                                  [&]() -> Result<ir::Model> { return input.clone(); }};
    QONNX_ASSIGN_OR_RETURN(checked, pipeline.checker ? pipeline.checker->check(model, request)
                                                     : targets::check_outputs_match(model, request));
  }
  ConvertResult result;
  result.report_json = make_report(o, pipeline.text, ctx, timing.timings(), quantizers, checked.checks);
  result.model = std::move(model);
  result.pipeline = std::move(pipeline.text);
  result.check_lines = std::move(checked.lines);
  result.check_failed = checked.failed;
  result.check_failure = std::move(checked.failure);
  result.timings = timing.timings();
  result.validate_seconds = validate_seconds;
  result.counters = ctx.counters();
  return result;
}

}  // namespace qonnx::api
