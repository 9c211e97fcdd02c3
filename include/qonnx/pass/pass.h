// Passes and the pass manager: an explicit registry, textual pipelines in MLIR style
// ("fold-constants,lower-quant{target=qdq},fixpoint(cleanup,fold-constants)"), a structural verifier
// after every pass, timing and per-pass counters.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "qonnx/exec/kernel.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::pass {

class Pass;

// What `list-passes` shows of one option.
struct OptionSpec {
  std::string name;
  std::string type;  // bool | int | string | one of: a|b|c
  std::string default_value;
  std::string help;
};

// name=value pairs as written in a pipeline.
using PassOptions = std::map<std::string, std::string>;

// One option of a pass, declared once as a member (as MLIR's Option<T>): the infrastructure parses the
// pipeline text into it, lists it, and rejects unknown names and bad values with a usage error.
class OptionBase {
 public:
  OptionBase(Pass* owner, std::string name, std::string help);
  virtual ~OptionBase() = default;
  OptionBase(const OptionBase&) = delete;
  OptionBase& operator=(const OptionBase&) = delete;
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  virtual std::string type_name() const = 0;
  virtual std::string default_text() const = 0;
  virtual Status parse(const std::string& text) = 0;
  virtual void reset() = 0;

 private:
  std::string name_, help_;
};

// Value parsing and printing for the option types (bool: 0/1/true/false; int64_t, uint64_t, string).
Status parse_option_value(const std::string& text, bool* out);
Status parse_option_value(const std::string& text, int64_t* out);
Status parse_option_value(const std::string& text, uint64_t* out);
Status parse_option_value(const std::string& text, std::string* out);
std::string option_value_text(bool v);
std::string option_value_text(int64_t v);
std::string option_value_text(uint64_t v);
std::string option_value_text(const std::string& v);
std::string option_type_name(bool);
std::string option_type_name(int64_t);
std::string option_type_name(uint64_t);
std::string option_type_name(const std::string&);

template <typename T>
class Option final : public OptionBase {
 public:
  // `choices`, when given, are the only accepted values.
  Option(Pass* owner, std::string name, T default_value, std::string help, std::vector<T> choices = {})
      : OptionBase(owner, std::move(name), std::move(help)), default_(default_value), value_(default_value),
        choices_(std::move(choices)) {}
  const T& value() const { return value_; }
  const T& operator*() const { return value_; }
  operator const T&() const { return value_; }  // NOLINT: options read like the values they hold
  std::string type_name() const override {
    if (choices_.empty()) return option_type_name(value_);
    std::string s = "one of: ";
    for (size_t i = 0; i < choices_.size(); ++i) s += (i ? "|" : "") + option_value_text(choices_[i]);
    return s;
  }
  std::string default_text() const override { return option_value_text(default_); }
  Status parse(const std::string& text) override {
    T parsed{};
    QONNX_RETURN_IF_ERROR(parse_option_value(text, &parsed));
    if (!choices_.empty() && std::find(choices_.begin(), choices_.end(), parsed) == choices_.end())
      return Status(Code::kUsage, "'" + text + "' is not " + type_name());
    value_ = parsed;
    return Status::ok();
  }
  void reset() override { value_ = default_; }

 private:
  T default_;
  T value_;
  std::vector<T> choices_;
};

// A counter a pass declares as a member and bumps while it runs; the manager adds it to the context's
// counters under the pass's name (`--stats`, `--report`).
class Statistic {
 public:
  Statistic(Pass* owner, std::string name, std::string help);
  Statistic(const Statistic&) = delete;
  Statistic& operator=(const Statistic&) = delete;
  Statistic& operator+=(int64_t n) {
    value_ += n;
    return *this;
  }
  Statistic& operator++() { return *this += 1; }
  int64_t value() const { return value_; }
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  // The value since the last take (the manager reads each run's share).
  int64_t take() {
    int64_t v = value_;
    value_ = 0;
    return v;
  }

 private:
  std::string name_, help_;
  int64_t value_ = 0;
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
  // A diagnostic that is not a problem (logged at info level, listed in --report diagnostics).
  void note(const ir::Node* node, const std::string& message);

  const std::map<std::string, std::map<std::string, int64_t>>& counters() const { return counters_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  void set_current(const std::string& pass_name) { current_ = pass_name; }

  // Results passes leave for later passes and for the tool (e.g. passes::QuantizerOutcomes): one
  // object per type, made on first use, living as long as the context.
  template <typename T>
  T& result() {
    std::shared_ptr<void>& slot = results_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }
  // The result of type T, nullptr when no pass made one.
  template <typename T>
  const T* find_result() const {
    auto it = results_.find(std::type_index(typeid(T)));
    return it == results_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }
  const std::string& current() const { return current_; }

 private:
  const exec::KernelRegistry& registry_;
  std::string current_;
  std::map<std::string, std::map<std::string, int64_t>> counters_;
  std::vector<Diagnostic> diagnostics_;
  std::map<std::type_index, std::shared_ptr<void>> results_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  // The declared options, in declaration order.
  std::vector<OptionSpec> options() const;
  // Sets the named options (the others keep their current values); an unknown name or a bad value is a
  // usage error naming the pass and the option.
  Status configure(const PassOptions& options);
  const std::vector<Statistic*>& statistics() const { return statistics_; }
  // Returns whether the model changed (nodes left alone are no change).
  virtual Result<bool> run(ir::Model& model, PassContext& ctx) = 0;

 protected:
  Pass() = default;
  // Checks that involve several options, after parsing.
  virtual Status check_options() const { return Status::ok(); }

 private:
  friend class OptionBase;
  friend class Statistic;
  std::vector<OptionBase*> options_;
  std::vector<Statistic*> statistics_;
};

// A pass that works one graph at a time: run() calls run_on_graph for the main graph, then for every
// If/Loop/Scan body (parents before their bodies, each body as its parent's call left it; an error
// names the body). A pass that must see the main graph only passes Bodies::kSkip to the constructor,
// with a one-line comment saying why. Keep run-time state in locals or a per-run struct, not in
// members (a run writes only its statistics).
class GraphPass : public Pass {
 public:
  enum class Bodies { kWalk, kSkip };
  bool walks_bodies() const { return bodies_ == Bodies::kWalk; }
  Result<bool> run(ir::Model& model, PassContext& ctx) final;

 protected:
  explicit GraphPass(Bodies bodies = Bodies::kWalk) : bodies_(bodies) {}
  // One graph of `model`; returns whether it changed.
  virtual Result<bool> run_on_graph(ir::Model& model, ir::Graph& graph, PassContext& ctx) = 0;
  // After every graph: model-level work (an opset import the rewritten nodes need); `changed` says
  // whether any graph changed. Returns whether the model changed.
  virtual Result<bool> finish(ir::Model& model, bool changed, PassContext& ctx) { return changed; }

 private:
  Bodies bodies_;
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

// A parsed pipeline: a sequence of passes and fixed-point groups. Each pass entry owns its configured
// instance (created from the registry given to parse_pipeline), which every run of the entry uses.
struct PipelineItem {
  std::string pass;                    // empty for a group
  PassOptions options;                 // as written, for format_pipeline
  std::shared_ptr<Pass> instance;
  std::vector<PipelineItem> group;     // fixpoint(...) members
  int max_iterations = 8;
};

Result<std::vector<PipelineItem>> parse_pipeline(const std::string& text, const PassRegistry& registry = PassRegistry::global());
std::string format_pipeline(const std::vector<PipelineItem>& items);
// Sets `key=value` on every entry of `pass`, inside fixpoint groups too; returns how many entries.
Result<int> set_pass_option(std::vector<PipelineItem>& items, const std::string& pass, const std::string& key,
                            const std::string& value);

// Builds a pipeline in code (targets' named pipelines): each add() creates and configures an entry from
// the registry; the first error (an unknown pass or option) is kept and returned by build().
class PipelineBuilder {
 public:
  explicit PipelineBuilder(const PassRegistry& registry = PassRegistry::global()) : registry_(registry) {}
  PipelineBuilder& add(const std::string& pass, const PassOptions& options = {});
  Result<std::vector<PipelineItem>> build();

 private:
  const PassRegistry& registry_;
  std::vector<PipelineItem> items_;
  Status status_ = Status::ok();
};

// Hooks around every pass run: timing, IR printing and the verifier plug in here.
class Instrumentation {
 public:
  virtual ~Instrumentation() = default;
  virtual void before_pass(const Pass& pass, const ir::Model& model) {}
  // An error stops the pipeline; the manager adds the pass's name to it.
  virtual Status after_pass(const Pass& pass, const ir::Model& model, bool changed) { return Status::ok(); }
};

struct PassTiming {
  std::string pass;
  double seconds = 0;
  bool changed = false;
};

// Wall time of every pass run, in run order.
class TimingInstrumentation : public Instrumentation {
 public:
  void before_pass(const Pass& pass, const ir::Model& model) override;
  Status after_pass(const Pass& pass, const ir::Model& model, bool changed) override;
  const std::vector<PassTiming>& timings() const { return timings_; }

 private:
  std::vector<PassTiming> timings_;
  double started_ = 0;
};

// The graph as ONNX text on stderr after the named pass ("all": after every pass).
class PrintIrInstrumentation : public Instrumentation {
 public:
  explicit PrintIrInstrumentation(std::string pass) : pass_(std::move(pass)) {}
  Status after_pass(const Pass& pass, const ir::Model& model, bool changed) override;

 private:
  std::string pass_;
};

// Runs the pipeline. The structural verifier runs after every pass, before the given instrumentations;
// errors name the pass. Returns whether any pass changed the model.
Result<bool> run_pipeline(ir::Model& model, const std::vector<PipelineItem>& items, PassContext& ctx,
                          const std::vector<Instrumentation*>& instrumentations = {});

// Runs `fn` on the main graph, then on every body of If/Loop/Scan nodes (parents before their bodies,
// bodies as they are after their parent's call); true when any call changed the model.
Result<bool> for_each_graph(ir::Model& model, const std::function<Result<bool>(ir::Graph&)>& fn);

// SSA names, defined-before-use (in some topological order), produced graph outputs, no cycles;
// bodies too (their reads of enclosing values resolvable, implicit inputs exact); and the model-level
// rules the loader applies (io::check_model_rules).
Status verify_graph(const ir::Model& model);

}  // namespace qonnx::pass
