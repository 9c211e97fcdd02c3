// `cleanup` (qonnx-cleanup) and `channels-last` (qonnx-to-channels-last): a fixed pipeline whose
// result must compute the very same bits as its input, which --check verifies with zero tolerance.
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "api/input_context.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/api/commands.h"
#include "qonnx/support/log.h"

namespace qonnx::api {
namespace {

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

// --check N with zero tolerance against `input`: one line per output into `result`, and whether any
// output differs.
Status exact_check(const ir::Model& input, int runs, uint64_t seed, PassResult& result) {
  auto checks = analysis::check_equivalence(input, result.model, {runs, seed, 0.0, 0.0});
  if (!checks.is_ok()) return std::move(checks).status().with_context("--check");
  for (const auto& c : checks.value()) {
    if (c.ok) {
      result.check_lines.push_back(fmt::format("check {}: bit-identical over {} runs", c.name, runs));
    } else if (!c.problem.empty()) {
      result.check_lines.push_back(fmt::format("check {}: MISMATCH: {}", c.name, c.problem));
    } else {
      char error[64];  // printf's %g, which the line has always used
      std::snprintf(error, sizeof error, "%.6g", c.max_abs_error);
      result.check_lines.push_back(fmt::format("check {}: MISMATCH over {} runs: max abs error {}", c.name, runs, error));
    }
    result.check_failed |= !c.ok;
  }
  if (result.check_failed) result.check_failure = "the result computes different values than the input";
  return Status::ok();
}

// The result of a pipeline run, compared exactly with `input` when given (--check `runs`).
Result<PassResult> exact_result(ir::Model model, const std::optional<ir::Model>& input, int runs, uint64_t seed,
                                const pass::PassContext& ctx) {
  PassResult result;
  result.model = std::move(model);
  if (input) QONNX_RETURN_IF_ERROR(exact_check(*input, runs, seed, result));
  result.counters = ctx.counters();
  return result;
}

}  // namespace

Result<std::string> cleanup_pipeline(const CleanupOptions& o) {
  if (o.check > 0 && (o.override_batchsize > 0 || !o.override_inpsize.empty()))
    return Status(Code::kUsage, "--check compares with the input's shapes: it cannot be combined with --override-*");
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

Result<PassResult> cleanup(ir::Model model, const CleanupOptions& o) {
  QONNX_ASSIGN_OR_RETURN(const std::string text, cleanup_pipeline(o));
  QONNX_ASSIGN_OR_RETURN(const auto pipeline, pass::parse_pipeline(text));
  std::optional<ir::Model> input;
  if (o.check > 0) input = model.clone();  // initializer data shared, not copied
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, pipeline, ctx).status(), o.input_name));
  for (const auto& d : ctx.diagnostics())
    log::warn("[{}] {}{}", d.pass, d.node.empty() ? "" : "node '" + d.node + "': ", d.message);
  model.set_metadata("qonnx-cc.pipeline", text);
  return exact_result(std::move(model), input, o.check, o.seed, ctx);
}

Result<PassResult> channels_last(ir::Model model, const ChannelsLastOptions& o) {
  QONNX_ASSIGN_OR_RETURN(const auto pipeline, pass::parse_pipeline(fmt::format(
      "freeze-initializer-inputs,infer-shapes,to-channels-last{{make-input-channels-last={}}},cleanup",
      o.make_input_channels_last ? 1 : 0)));
  std::optional<ir::Model> input;
  if (o.check > 0) input = model.clone();
  pass::PassContext ctx;
  QONNX_RETURN_IF_ERROR(with_input(pass::run_pipeline(model, pipeline, ctx).status(), o.input_name));
  model.set_metadata("qonnx-cc.pipeline", pass::format_pipeline(pipeline));
  model.set_metadata("qonnx-cc.version", QONNX_VERSION);
  return exact_result(std::move(model), input, o.check, o.seed, ctx);
}

}  // namespace qonnx::api
