// The model-changing commands (`convert`, `cleanup`, `channels-last`, `cost`) as library calls: each
// takes a model in memory and returns the result with what the command reports (check lines, the
// --report JSON, counters), printing nothing and writing no file. Warnings go to the log (stderr). The
// CLI (tools/qonnx-cc) and the Python package are thin shells over these functions: file names,
// overwrite rules, saving and printing are theirs. Errors carry the context the CLI reports, with
// `input_name` as the outermost item when it is given.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qonnx/exec/arithmetic.h"
#include "qonnx/analysis/inference_cost.h"
#include "qonnx/ir/model.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/status.h"

namespace qonnx::api {

// Each pass's counters (pass::Statistic) after a run, by pass name (`--stats`).
using PassCounters = std::map<std::string, std::map<std::string, int64_t>>;

struct ConvertOptions {
  std::string target = "qdq";
  std::string passes;       // a textual pipeline; overrides `target` when non-empty
  int target_opset = 0;     // 0: the target's default
  std::string round_mode;   // "", "0" or "1": ascend-quant-matmul{round-mode=...}
  bool strict = false;      // lower-quant{strict=1}, quant-act-to-multithreshold{strict=1}; QONNX ops left or unknown ops are errors
  int max_multithreshold_bits = 0;  // quant-act-to-multithreshold{max-bits=N}; 0: the pass's default (8)
  bool allow_approximate = false;        // lower-quant{allow-approximate=1}
  bool keep_initializer_inputs = false;  // freeze-initializer-inputs{keep=1}
  int check = 0;            // compare with the input on this many seeded random inputs
  uint64_t seed = 0;
  double atol = 1e-6, rtol = 1e-5;
  bool tolerance_given = false;  // atol or rtol set by the caller (ascend then bounds its deviation)
  exec::Arithmetic arithmetic = exec::Arithmetic::kFloat;  // --arith: how --check runs quantized layers
  std::string input_name;   // names the model in errors, warnings and the report's "input"
  std::string output_name;  // the report's "output"
  std::vector<pass::Instrumentation*> hooks;  // run after the timing hook (CLI: --print-ir-after)
};

struct ConvertResult {
  ir::Model model;  // metadata qonnx-cc.pipeline and qonnx-cc.version set
  std::string pipeline;                   // canonical text
  std::string report_json;                // what `convert --report` writes
  std::vector<std::string> check_lines;   // one per output and reference
  bool check_failed = false;              // the result must not be written
  std::string check_failure;              // why, when check_failed
  std::vector<pass::PassTiming> timings;  // every pass run, in order
  double validate_seconds = 0;            // ONNX's strict type check of the result
  PassCounters counters;
};

// The pipeline `convert` would run, as canonical text (`--dump-pipeline`); a usage error for an unknown
// target, an opset the target cannot reach or a shortcut option no entry of the pipeline takes.
Result<std::string> convert_pipeline(const ConvertOptions& options);
// Runs the pipeline, validates the result with ONNX's checker (strict type and shape inference, where
// the installed library knows the opset) and, with options.check > 0, runs the target's check. A check
// that finds a difference is not an error: the result says so (check_failed).
Result<ConvertResult> convert(ir::Model model, const ConvertOptions& options);

struct CleanupOptions {
  bool preserve_qnt_ops = true;  // 0: weight quantizers folded into float weights too
  bool extract_conv_bias = false;
  int64_t override_batchsize = 0;  // 0: keep
  std::string override_inpsize;    // "(1,3,224,224)" or a batch size; "": keep
  int check = 0;                   // exact comparison on this many seeded random inputs
  uint64_t seed = 0;
  std::string input_name;
};

struct ChannelsLastOptions {
  bool make_input_channels_last = false;
  int check = 0;  // exact comparison on this many seeded random inputs
  uint64_t seed = 0;
  std::string input_name;
};

// The result of a command that must not change what the model computes (`--check` compares exactly).
struct PassResult {
  ir::Model model;  // metadata qonnx-cc.pipeline set
  std::vector<std::string> check_lines;  // "check NAME: bit-identical over N runs" or MISMATCH
  bool check_failed = false;
  std::string check_failure;
  PassCounters counters;
};

// The pipeline `cleanup` runs (`--dump-pipeline`); a usage error for a bad override or --check combined
// with an override.
Result<std::string> cleanup_pipeline(const CleanupOptions& options);
Result<PassResult> cleanup(ir::Model model, const CleanupOptions& options);
Result<PassResult> channels_last(ir::Model model, const ChannelsLastOptions& options);

struct CostOptions {
  bool discount_sparsity = true;
  bool qonnx_ops_only = false;
  bool clip_aware = false;  // QCDQ Clip bounds narrow the bit width
  bool breakdown = false;   // the JSON adds optype_cost and node_cost
  bool flat = false;        // the JSON in qonnx's 2021 layout
  std::string input_name;
};

struct CostResult {
  std::string json;                // qonnx's JSON, as `cost` prints it
  analysis::InferenceCost cost;    // for cost_html and callers who want the numbers
  ir::Model preprocessed;          // the model after qonnx's preprocessing (`--output-onnx`)
};

Result<CostResult> cost(ir::Model model, const CostOptions& options);

}  // namespace qonnx::api
