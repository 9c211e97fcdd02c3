// Targets: one per backend qonnx-cc converts to (qdq, ngraph, ascend, fold, qonnx, finn, hls4ml). A target owns
// what is particular to its backend: the ops of its domain (kernels and ONNX schemas), the pipeline
// `convert --target NAME` runs, and how a conversion is checked. Passes and the pass manager know no
// target. Adding one: src/targets/<name>.cc and one line in src/targets/register.cc (docs/extending.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qonnx/exec/arithmetic.h"
#include "qonnx/analysis/equivalence.h"
#include "qonnx/ir/model.h"
#include "qonnx/pass/pass.h"
#include "qonnx/support/status.h"

namespace qonnx::exec {
class KernelRegistry;
}

namespace qonnx::targets {

// The default-domain opsets `--target-opset` accepts.
inline constexpr int64_t kOldestTargetOpset = 13;
inline constexpr int64_t kNewestTargetOpset = 21;

struct PipelineOptions {
  int64_t opset = 0;  // --target-opset; 0: the target's default
};

// What `convert --check N` asked for.
struct CheckRequest {
  int runs = 8;
  uint64_t seed = 0;
  double atol = 1e-6, rtol = 1e-5;
  bool tolerance_given = false;  // --atol or --rtol on the command line
  exec::Arithmetic arithmetic = exec::Arithmetic::kFloat;  // --arith: how both models' layers compute
  // The pipeline that made the result (a target may rerun it with other options for a reference).
  const std::vector<pass::PipelineItem>* pipeline = nullptr;
  // A fresh copy of the model the conversion started from, each time it is called.
  std::function<Result<ir::Model>()> original;
};

// The outcome of a check: one comparison per output and reference, the lines to print, and whether
// the result must not be written.
struct CheckOutcome {
  std::vector<std::pair<std::string, analysis::OutputCheck>> checks;  // (against, output's comparison)
  std::vector<std::string> lines;                                     // for stdout, one per line
  bool failed = false;
  std::string failure;  // why, when failed
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  // The kernels of the target's own ops into `kernels`, their ONNX schemas into ONNX's registry.
  virtual void register_ops(exec::KernelRegistry& kernels) const {}
  // The pipeline of `convert --target NAME` (a usage error for an opset the target cannot reach).
  virtual Result<std::vector<pass::PipelineItem>> pipeline(const PipelineOptions& options,
                                                           const pass::PassRegistry& registry) const = 0;
  // Whether the result is meant for standard ONNX runtimes, so a QONNX op left in it is reported.
  virtual bool standard_onnx_result() const { return true; }
  // Whether this target's check also applies to a hand-written pipeline (`--passes`).
  virtual bool owns_pipeline(const std::vector<pass::PipelineItem>& pipeline) const { return false; }
  // `--check N`: compares `converted` with the original (default: check_outputs_match).
  virtual Result<CheckOutcome> check(const ir::Model& converted, const CheckRequest& request) const;
};

// A fresh copy of the pipeline that made the result (its own pass instances, whose options a reference
// may change).
Result<std::vector<pass::PipelineItem>> fresh_pipeline(const CheckRequest& request);
// Runs `pipeline` on a fresh copy of the original for a check's reference, the passes' warnings muted
// (the conversion has printed them already); `ctx` receives the counters.
Result<ir::Model> run_on_original(const CheckRequest& request, const std::vector<pass::PipelineItem>& pipeline,
                                  pass::PassContext& ctx);

// The default check: both models on the same seeded random inputs, every output within atol/rtol.
Result<CheckOutcome> check_outputs_match(const ir::Model& converted, const CheckRequest& request);

// One line per output of a comparison: "check NAME: ok over N runs[ against X]: max abs error A, ..."
// (`against` is "" or " against X"). `judged`: ok/MISMATCH by the tolerances, else "reported"; `beyond`
// names what the counted elements are beyond.
void append_check_lines(CheckOutcome& out, const std::vector<analysis::OutputCheck>& checks, int runs,
                        const std::string& against, const std::string& beyond, bool judged = true);

// The opset step of a pipeline: upgrade-opset to `opset`, constant folding and shape inference. Above the
// ONNX library's opset 17 the library's converter runs to 17 first, then upgrade-opset's own adapters.
void add_opset_steps(pass::PipelineBuilder& builder, int64_t opset);
// The steps of a target that lowers quantizers for a standard runtime: freeze-initializer-inputs, the
// opset steps (`opset`, or kOldestTargetOpset when 0), lower-quant with `lower_quant` options,
// lower-custom-ops, fold-constants, cleanup, infer-shapes.
void add_lowering_steps(pass::PipelineBuilder& builder, int64_t opset, const pass::PassOptions& lower_quant);
// A usage error unless 0 or kOldestTargetOpset..kNewestTargetOpset.
Status check_target_opset(int64_t opset);

class TargetRegistry {
 public:
  void add(std::unique_ptr<Target> target);
  const Target* find(const std::string& name) const;
  // In registration order.
  std::vector<std::string> names() const;
  // The first target whose check applies to a hand-written pipeline; nullptr when none does.
  const Target* owner_of(const std::vector<pass::PipelineItem>& pipeline) const;
  // Every target's ops into `kernels` (register_all() calls it).
  void register_ops(exec::KernelRegistry& kernels) const;
  // Empty until qonnx::register_all() (or a test) fills it.
  static TargetRegistry& global();

 private:
  std::vector<std::unique_ptr<Target>> targets_;
};

// The pipeline of target `name` in the global registries, as text (`convert --dump-pipeline`); a usage
// error for an unknown target or opset.
Result<std::string> pipeline_text(const std::string& name, int64_t opset = 0);

// The built-in targets, in the order `list-passes` shows them (src/targets/register.cc).
void register_all_targets(TargetRegistry& registry);

// Whether `pass` runs anywhere in `pipeline` (fixpoint groups included).
bool uses_pass(const std::vector<pass::PipelineItem>& pipeline, const std::string& pass);

}  // namespace qonnx::targets
