// Passes and the pass manager: an explicit registry, textual pipelines in MLIR style
// ("fold-constants,lower-quant{target=qdq},fixpoint(cleanup,fold-constants)"), a structural verifier
// after every pass, timing and per-pass counters.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "qonnx/exec/kernel.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::pass {

struct OptionSpec {
  std::string name;
  std::string default_value;
  std::string help;
};

using PassOptions = std::map<std::string, std::string>;

// What happened to one Quant-family node, for `--report`.
struct QuantOutcome {
  std::string node, op_type, pass, outcome, detail;  // outcome: folded | lowered | left
};

struct Diagnostic {
  std::string pass, node, message;
  bool warning = true;
};

class PassContext {
 public:
  explicit PassContext(const exec::KernelRegistry& registry = exec::KernelRegistry::global()) : registry_(registry) {}
  const exec::KernelRegistry& registry() const { return registry_; }

  // Counters of the pass now running ("folded-nodes" += 3).
  void count(const std::string& counter, int64_t n = 1) { counters_[current_][counter] += n; }
  void warn(const ir::Node* node, const std::string& message);
  void record(const ir::Node& node, const std::string& outcome, const std::string& detail);

  const std::map<std::string, std::map<std::string, int64_t>>& counters() const { return counters_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const std::vector<QuantOutcome>& quant_outcomes() const { return outcomes_; }
  void set_current(const std::string& pass_name) { current_ = pass_name; }
  const std::string& current() const { return current_; }

 private:
  const exec::KernelRegistry& registry_;
  std::string current_;
  std::map<std::string, std::map<std::string, int64_t>> counters_;
  std::vector<Diagnostic> diagnostics_;
  std::vector<QuantOutcome> outcomes_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<OptionSpec> options() const { return {}; }
  // Unknown options are rejected by the manager before this is called.
  virtual Status configure(const PassOptions& options) { return Status::ok(); }
  // Returns whether the model changed.
  virtual Result<bool> run(ir::Model& model, PassContext& ctx) = 0;
};

using PassFactory = std::function<std::unique_ptr<Pass>()>;

class PassRegistry {
 public:
  void add(PassFactory factory);
  std::unique_ptr<Pass> create(const std::string& name) const;
  std::vector<std::string> names() const;
  // Closest registered name, for "did you mean".
  std::string closest(const std::string& name) const;
  // The process-wide registry: empty until the tool or a test calls qonnx::register_all().
  static PassRegistry& global();

 private:
  std::map<std::string, PassFactory> factories_;
};

// A parsed pipeline: a sequence of passes and fixed-point groups.
struct PipelineItem {
  std::string pass;                    // empty for a group
  PassOptions options;
  std::vector<PipelineItem> group;     // fixpoint(...) members
  int max_iterations = 8;
};

Result<std::vector<PipelineItem>> parse_pipeline(const std::string& text, const PassRegistry& registry = PassRegistry::global());
std::string format_pipeline(const std::vector<PipelineItem>& items);

// Named pipelines for `convert --target`.
Result<std::string> target_pipeline(const std::string& target);
std::vector<std::string> target_names();

struct PassTiming {
  std::string pass;
  double seconds = 0;
  bool changed = false;
};

struct RunOptions {
  std::string print_ir_after;  // pass name or "all": ONNX text of the graph to stderr
};

// Runs the pipeline; every pass is followed by the verifier. Errors name the pass.
Result<std::vector<PassTiming>> run_pipeline(ir::Model& model, const std::vector<PipelineItem>& items,
                                            PassContext& ctx, const RunOptions& options = {});

// SSA names, defined-before-use (in some topological order), produced graph outputs, no cycles.
Status verify_graph(const ir::Model& model);

}  // namespace qonnx::pass
