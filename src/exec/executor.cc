#include "qonnx/exec/executor.h"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>
#include <unordered_map>
#include <exception>
#include <new>

#include <fmt/format.h>


namespace qonnx::exec {

Result<std::vector<const ir::Node*>> topological_order(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  // Kahn's algorithm, preferring stored order so a sorted graph runs as written.
  std::unordered_map<const ir::Node*, size_t> index;  // lookups only: no iteration order leaks
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  auto depends_on = [&](size_t i, const ir::Value* v) {
    // Values of enclosing graphs (read by a body) are ready before this graph runs.
    if (!v || !v->producer() || v->graph() != &graph) return;
    consumers[index[v->producer()]].push_back(i);
    ++pending[i];
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* v : nodes[i]->inputs()) depends_on(i, v);
    for (const ir::Value* v : nodes[i]->implicit_inputs()) depends_on(i, v);
  }
  std::vector<const ir::Node*> order;
  std::vector<size_t> ready;  // sorted descending: back() is the earliest stored node
  for (size_t i = nodes.size(); i-- > 0;)
    if (pending[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(nodes[i]);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(std::upper_bound(ready.begin(), ready.end(), c, std::greater<size_t>()), c);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) return Status(Code::kInvalidModel, "the graph has a cycle").with_context(nodes[i]->describe());
  }
  return order;
}

namespace {

// Runs `kernel` on `inputs`. Kernels may be lenient about mixed types; a standard runtime is not, so
// neither is the executor: `type_check` (when known) checks inputs and outputs.
Result<std::vector<Tensor>> invoke_kernel(const Kernel& kernel, const void* prepared, const ir::Node& node,
                                         int64_t version, std::vector<const Tensor*> inputs,
                                         const TypeCheck& type_check, const BodyRunner* bodies = nullptr,
                                         uint64_t dying_inputs = 0, BufferPool* pool = nullptr,
                                         uint64_t constant_inputs = 0, const void* prepacked = nullptr,
                                         bool* over_memory_limit = nullptr, const Epilogue* epilogue = nullptr,
                                         bool* epilogue_applied = nullptr, const IntegerForm* codes_form = nullptr,
                                         bool floats_needed = true, const Tensor* input_codes = nullptr,
                                         Tensor* output_codes = nullptr,
                                         CodesLayout codes_layout = CodesLayout::kChannelsLast,
                                         const Tensor* input1_codes = nullptr) {
  if (!kernel.containers)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] && !inputs[i]->is_tensor())
        return Status(Code::kInvalidModel, fmt::format("{} is a {} value; {} takes tensors", input_label(node, i),
                                                       inputs[i]->type_string(), node.op_type()))
            .with_context(node.describe());
  if (type_check) QONNX_RETURN_IF_ERROR(type_check(inputs, nullptr));
  KernelContext ctx(node, std::move(inputs), prepared);
  ctx.set_prepacked(prepacked);
  ctx.set_body_runner(bodies);
  ctx.set_buffer_pool(pool);
  ctx.set_dying_inputs(dying_inputs);
  ctx.set_constant_inputs(constant_inputs);
  ctx.set_epilogue(epilogue);
  ctx.set_input_codes(input_codes, input1_codes);
  ctx.request_output_codes(codes_form, floats_needed, codes_layout);
  Status st;
  try {
    st = kernel.run(ctx);
  } catch (const MemoryLimitError& e) {
    st = Status(Code::kFailed, e.what());
    if (over_memory_limit) *over_memory_limit = true;
  } catch (const std::bad_alloc&) {
    st = Status(Code::kFailed, "out of memory");
  } catch (const std::exception& e) {
    st = Status(Code::kFailed, e.what());
  }
  if (!st.is_ok()) return std::move(st).with_context(node.describe());
  if (epilogue_applied) *epilogue_applied = epilogue && ctx.epilogue_applied();
  if (output_codes) *output_codes = std::move(ctx.output_codes());
  for (size_t k = 0; k < node.outputs().size(); ++k)
    if (node.outputs()[k] && !ctx.outputs()[k].defined())
      return Status(Code::kFailed, fmt::format("kernel produced no output #{}", k)).with_context(node.describe());
  // Outputs bind the same type parameters as the inputs (Div's Y is its A's type).
  if (type_check) {
    std::vector<const Tensor*> checked;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) checked.push_back(ctx.input(i));
    QONNX_RETURN_IF_ERROR(type_check(checked, &ctx.outputs()));
  }
  return std::move(ctx.outputs());
}

// The kernel for `node` and its plan-time state (attribute errors surface here, naming the node).
struct PreparedKernel {
  const Kernel* kernel = nullptr;
  PreparedState state;
};

Result<PreparedKernel> prepare_kernel(const ir::Model& model, const ir::Node& node, const KernelRegistry& registry) {
  int64_t version = model.op_version(node.domain());
  const Kernel* kernel = registry.find(node.domain(), node.op_type(), version);
  if (!kernel) return registry.unsupported(node.domain(), node.op_type(), version).with_context(node.describe());
  PreparedKernel p{kernel, nullptr};
  if (kernel->prepare) {
    try {
      auto state = kernel->prepare(node, version);
      if (!state.is_ok()) return std::move(state).status().with_context(node.describe());
      p.state = std::move(state).value();
    } catch (const std::exception& e) {
      return Status(Code::kInvalidModel, e.what()).with_context(node.describe());
    }
  }
  return p;
}

}  // namespace

Status check_plannable(const ir::Model& model, const KernelRegistry& registry) {
  Status status = Status::ok();
  model.graph().visit_graphs([&](const ir::Graph& graph) {
    if (!status.is_ok()) return;
    auto order = topological_order(graph);
    if (!order.is_ok()) {
      status = std::move(order).status();
      return;
    }
    for (const ir::Node* node : order.value()) {
      auto prepared = prepare_kernel(model, *node, registry);
      if (!prepared.is_ok()) {
        status = std::move(prepared).status();
        return;
      }
    }
  });
  return status;
}

Result<std::vector<Tensor>> evaluate_node(const ir::Model& model, const ir::Node& node,
                                          const std::vector<const Tensor*>& inputs, const KernelRegistry& registry) {
  QONNX_ASSIGN_OR_RETURN(PreparedKernel k, prepare_kernel(model, node, registry));
  int64_t version = model.op_version(node.domain());
  return invoke_kernel(*k.kernel, k.state.get(), node, version, inputs, registry.type_check(node, version));
}

struct Executor::Plan {
  // A node run once at plan time (its outputs are plan-time constants), kept so that a streamed value can
  // be made again from the initializers it came from.
  struct Fold {
    const ir::Node* node;
    const Kernel* kernel;
    PreparedState prepared;
    int64_t version;
    TypeCheck type_check;
  };
  struct Step {
    const ir::Node* node;
    const Kernel* kernel;
    PreparedState prepared;
    PreparedState prepacked;                   // the kernel's prepack of the constant inputs, or null
    int64_t version;
    TypeCheck type_check;                      // checked on every run; empty: no schema known
    std::vector<int> release;                  // value ids whose last use is this step
    uint64_t dying_inputs = 0;                 // bit k: input k is read for the last time here
    uint64_t constant_inputs = 0;              // bit k: input k is a plan-time constant
    uint64_t captured_inputs = 0;              // bit k: the runs read only input k's dtype and dims
    std::vector<std::shared_ptr<Plan>> bodies;  // parallel to node->bodies()
    std::string path_note;                     // the kernel's choice of path (PrepackContext::path_note)
    // Streaming (the plan's weights exceed --max-memory): bit k: input k's data is not held by the plan
    // and is made again from external data just before each run of the step, then dropped.
    uint64_t made_per_run = 0;
    bool repack_per_run = false;               // the kernel's prepack is made again each run (not held)
    bool takes_epilogue = false;               // the prepack's PrepackContext::takes_epilogue
    // Elementwise nodes fused after this step, in order (docs/arithmetic.md): each reads the previous one's
    // output (the first reads this step's output 0, which is then never stored) and plan-time constants.
    struct Fused : Fold {
      uint64_t constant_inputs;
      std::shared_ptr<const Epilogue> epilogue;
    };
    std::vector<Fused> fused;
    std::shared_ptr<const Epilogue> epilogue;  // the fused nodes' epilogues as one
    // Byte codes (KernelContext::input_codes): the prepack's PrepackContext::reads_input_codes,
    // input_codes_layout, writes_output_codes and writes_stored_codes; whether the runs are given input 0's
    // codes; the form of the step's final output whose codes it is asked for (nullptr: none), their layout,
    // and whether its floats are read too.
    bool reads_codes = false, writes_codes = false, writes_stored_codes = false;
    CodesLayout reads_layout = CodesLayout::kChannelsLast;
    bool given_codes = false;
    bool reads_input1_codes = false, given_input1_codes = false;  // the same for input 1, in its own order
    const IntegerForm* codes_form = nullptr;
    CodesLayout codes_layout = CodesLayout::kChannelsLast;
    bool floats_needed = true;
  };
  const ir::Graph* graph = nullptr;
  std::vector<Step> steps;       // the nodes that run per input set
  // value id -> its tensor when known at plan time: initializers, decoded once, and the outputs of
  // nodes that read only such values (weight quantizers, parameter math), run once by the same kernels.
  std::vector<Tensor> constants;
  std::vector<bool> keep;  // value id -> never released
  // value id -> its integer form (Arithmetic::kInt only), from the kernels' integer_forms functions.
  std::vector<std::optional<IntegerForm>> forms;
  Arithmetic arithmetic = Arithmetic::kInt;
  std::vector<Fold> folds;
  std::vector<int> folded_by;       // value id -> index in folds of the node that made it, or -1
  std::vector<bool> from_external;  // value id -> an external initializer or a value folded from one
  std::vector<bool> streamed;       // value id -> the plan holds no data for it: made again per run
  std::string streaming_note;       // empty unless the plan streams
};

namespace {

// Known at plan time: an initializer (also one listed among the graph inputs: constants, as for
// every pass) or a plan-time result.
bool fixed_at_plan_time(const Executor::Plan& plan, const ir::Value* v) {
  return v && v->graph() == plan.graph && plan.constants[static_cast<size_t>(v->id())].defined();
}

// What a node's prepack and integer-form functions see: its plan-time constants and its inputs' forms.
PrepackContext plan_context(const Executor::Plan& plan, const ir::Node& node, const void* prepared) {
  PrepackContext context;
  context.node = &node;
  context.prepared = prepared;
  context.arithmetic = plan.arithmetic;
  for (const ir::Value* v : node.inputs()) {
    const bool fixed = fixed_at_plan_time(plan, v);
    context.constants.push_back(fixed ? &plan.constants[static_cast<size_t>(v->id())] : nullptr);
    const bool local = v && v->graph() == plan.graph;
    const auto* form = local ? &plan.forms[static_cast<size_t>(v->id())] : nullptr;
    context.forms.push_back(form && form->has_value() ? &**form : nullptr);
  }
  return context;
}

// A step without its prepack: nothing captured, no epilogue taken, no byte codes read or written.
void drop_prepack_claims(Executor::Plan::Step& step) {
  step.captured_inputs = 0;
  step.takes_epilogue = step.reads_codes = step.writes_codes = step.writes_stored_codes = false;
  step.reads_input1_codes = false;
  step.reads_layout = CodesLayout::kChannelsLast;
}

// The kernel's prepack of the step's plan-time constant inputs and input forms (once per plan), or null.
PreparedState prepack_step(const Executor::Plan& plan, Executor::Plan::Step& step) {
  if (!step.kernel->prepack) return nullptr;
  PrepackContext context = plan_context(plan, *step.node, step.prepared.get());
  const bool any = std::any_of(context.constants.begin(), context.constants.end(), [](const Tensor* t) { return t; }) ||
                   std::any_of(context.forms.begin(), context.forms.end(), [](const IntegerForm* f) { return f; });
  if (!any) return nullptr;
  context.path_note = &step.path_note;
  context.captured_inputs = &step.captured_inputs;
  context.takes_epilogue = &step.takes_epilogue;
  context.reads_input_codes = &step.reads_codes;
  context.input_codes_layout = &step.reads_layout;
  context.reads_input1_codes = &step.reads_input1_codes;
  context.writes_output_codes = &step.writes_codes;
  context.writes_stored_codes = &step.writes_stored_codes;
  try {
    PreparedState packed = step.kernel->prepack(context);
    if (!packed) drop_prepack_claims(step);
    step.captured_inputs &= step.constant_inputs;
    return packed;
  } catch (const MemoryLimitError&) {
    throw;  // not a reason to take another path: the plan streams the step or fails
  } catch (const std::exception&) {
    step.path_note.clear();
    drop_prepack_claims(step);
    return nullptr;  // the runs go without it
  }
}

// Fused epilogues applied one after the other on each run.
class EpilogueChain final : public Epilogue {
 public:
  explicit EpilogueChain(std::vector<std::shared_ptr<const Epilogue>> parts) : parts_(std::move(parts)) {}
  void apply(float* y, int64_t n) const override {
    for (const auto& part : parts_) part->apply(y, n);
  }
  std::vector<const Epilogue*> parts() const override {
    std::vector<const Epilogue*> all;
    for (const auto& part : parts_) all.push_back(part.get());
    return all;
  }

 private:
  std::vector<std::shared_ptr<const Epilogue>> parts_;
};

// Fuses into each step that takes epilogues the chain of elementwise nodes after it: while the step's
// current output is read by one step alone, as that step's input 0, and is neither kept nor read by a body,
// a reader whose kernel makes an epilogue of it (its other inputs plan-time constants held by the plan) is
// fused and its output becomes the step's. `last_use` (value id -> step index) is renumbered.
void fuse_epilogues(Executor::Plan& plan, std::vector<int>& last_use) {
  const ir::Graph& graph = *plan.graph;
  std::vector<int> reads(graph.value_count(), 0), reader(graph.value_count(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const ir::Node& node = *plan.steps[s].node;
    for (const ir::Value* v : node.inputs())
      if (v && v->graph() == &graph) ++reads[static_cast<size_t>(v->id())], reader[static_cast<size_t>(v->id())] = static_cast<int>(s);
    for (const ir::Value* v : node.implicit_inputs())
      if (v && v->graph() == &graph) reads[static_cast<size_t>(v->id())] += 2;  // never fused
  }
  std::vector<bool> removed(plan.steps.size(), false);
  std::vector<int> fused_into(plan.steps.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    Executor::Plan::Step& step = plan.steps[s];
    if (removed[s] || !step.takes_epilogue || step.node->outputs().size() != 1) continue;
    const ir::Value* out = step.node->outputs()[0];
    std::vector<std::shared_ptr<const Epilogue>> parts;
    while (out) {
      const size_t id = static_cast<size_t>(out->id());
      if (plan.keep[id] || reads[id] != 1) break;
      const size_t t = static_cast<size_t>(reader[id]);
      const Executor::Plan::Step& next = plan.steps[t];
      const auto& ins = next.node->inputs();
      bool fusible = next.kernel->epilogue && next.node->outputs().size() == 1 && next.node->outputs()[0] &&
                     next.bodies.empty() && next.made_per_run == 0 && !next.repack_per_run && !ins.empty() && ins[0] == out;
      for (size_t k = 1; fusible && k < ins.size(); ++k)
        fusible = !ins[k] || (fixed_at_plan_time(plan, ins[k]) && !plan.streamed[static_cast<size_t>(ins[k]->id())]);
      if (!fusible) break;
      std::shared_ptr<const Epilogue> epilogue;
      try {
        epilogue = next.kernel->epilogue(plan_context(plan, *next.node, next.prepared.get()));
      } catch (const std::exception&) {
      }
      if (!epilogue) break;
      step.fused.push_back({{next.node, next.kernel, next.prepared, next.version, next.type_check}, next.constant_inputs, epilogue});
      parts.push_back(std::move(epilogue));
      removed[t] = true;
      fused_into[t] = static_cast<int>(s);
      out = next.node->outputs()[0];
    }
    if (parts.empty()) continue;
    step.epilogue = parts.size() == 1 ? parts[0] : std::make_shared<const EpilogueChain>(std::move(parts));
    std::vector<std::string> names;
    for (const auto& f : step.fused) names.push_back(fmt::format("{} '{}'", f.node->op_type(), f.node->name()));
    if (!step.path_note.empty()) step.path_note += fmt::format("; fused: {}", fmt::join(names, ", "));
  }
  std::vector<int> new_index(plan.steps.size(), -1);
  int kept = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (!removed[s]) new_index[s] = kept++;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (removed[s]) new_index[s] = new_index[static_cast<size_t>(fused_into[s])];
  for (int& use : last_use)
    if (use >= 0) use = new_index[static_cast<size_t>(use)];
  std::vector<Executor::Plan::Step> steps;
  steps.reserve(static_cast<size_t>(kept));
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (!removed[s]) steps.push_back(std::move(plan.steps[s]));
  plan.steps = std::move(steps);
}

// The value a step's run leaves: its last fused node's output, else its node's output 0.
const ir::Value* final_output(const Executor::Plan::Step& step) {
  if (!step.fused.empty()) return step.fused.back().node->outputs()[0];
  return step.node->outputs().empty() ? nullptr : step.node->outputs()[0];
}

// Asks each step that can publish byte codes for them when its final output has an integer form and a
// reader takes codes (as its input 0, with its prepack held: a prepack made per run could fail and read
// floats), in the layout most of its code readers read that the step writes (channels-last on a tie); a
// reader of the other layout reads the floats. The floats are still written unless every read of the value
// is a reader given the codes and the value is not kept.
void plan_codes(Executor::Plan& plan) {
  const ir::Graph& graph = *plan.graph;
  constexpr size_t kLayouts = 2;
  std::vector<int> reads(graph.value_count(), 0);
  std::vector<std::array<int, kLayouts>> code_reads(graph.value_count(), std::array<int, kLayouts>{});
  // The value a step reads as codes at input i (0, or 1 in its own order), or nullptr.
  const auto reader_of = [&](const Executor::Plan::Step& step, size_t i) -> const ir::Value* {
    const auto& ins = step.node->inputs();
    const bool takes = (i == 0 ? step.reads_codes : step.reads_input1_codes) && !step.repack_per_run && ins.size() > i &&
                       ins[i] && ins[i]->graph() == &graph;
    return takes ? ins[i] : nullptr;
  };
  for (auto& step : plan.steps) {
    if (const ir::Value* v = reader_of(step, 0)) ++code_reads[static_cast<size_t>(v->id())][static_cast<size_t>(step.reads_layout)];
    if (const ir::Value* v = reader_of(step, 1)) ++code_reads[static_cast<size_t>(v->id())][static_cast<size_t>(CodesLayout::kAsStored)];
    for (const ir::Value* v : step.node->inputs())
      if (v && v->graph() == &graph) ++reads[static_cast<size_t>(v->id())];
    for (const ir::Value* v : step.node->implicit_inputs())
      if (v && v->graph() == &graph) ++reads[static_cast<size_t>(v->id())];
  }
  std::vector<std::optional<CodesLayout>> published(graph.value_count());
  for (auto& step : plan.steps) {
    const ir::Value* out = final_output(step);
    if (!out) continue;
    const size_t id = static_cast<size_t>(out->id());
    const int channels_last = step.writes_codes ? code_reads[id][static_cast<size_t>(CodesLayout::kChannelsLast)] : 0;
    const int as_stored = step.writes_stored_codes ? code_reads[id][static_cast<size_t>(CodesLayout::kAsStored)] : 0;
    if (!plan.forms[id] || channels_last + as_stored == 0) continue;
    step.codes_layout = as_stored > channels_last ? CodesLayout::kAsStored : CodesLayout::kChannelsLast;
    step.codes_form = &*plan.forms[id];
    step.floats_needed = plan.keep[id] || std::max(channels_last, as_stored) != reads[id];
    published[id] = step.codes_layout;
  }
  for (auto& step : plan.steps) {
    const ir::Value* v = reader_of(step, 0);
    step.given_codes = v && published[static_cast<size_t>(v->id())] == step.reads_layout;
    const ir::Value* v1 = reader_of(step, 1);
    step.given_input1_codes = v1 && published[static_cast<size_t>(v1->id())] == CodesLayout::kAsStored;
  }
}

// Records the integer forms of `node`'s outputs (Arithmetic::kInt, kernels with an integer_forms function).
void derive_forms(Executor::Plan& plan, const ir::Node& node, const Kernel& kernel, const void* prepared) {
  if (plan.arithmetic != Arithmetic::kInt || !kernel.integer_forms) return;
  std::vector<std::optional<IntegerForm>> forms;
  try {
    forms = kernel.integer_forms(plan_context(plan, node, prepared));
  } catch (const std::exception&) {
    return;  // no form: the float path
  }
  for (size_t i = 0; i < node.outputs().size() && i < forms.size(); ++i)
    if (const ir::Value* v = node.outputs()[i]; v && forms[i]) plan.forms[static_cast<size_t>(v->id())] = std::move(forms[i]);
}

// Runs `node` now when all it reads is fixed; false when it must run per input set (or failed
// here: then it fails the same way at run time, where it always has). Over the memory limit is an error:
// run per input set, the node's output would no longer be a constant, and its readers could take
// another path (docs/arithmetic.md).
Result<bool> fold_at_plan_time(Executor::Plan& plan, const ir::Node& node, const PreparedKernel& k, int64_t version,
                               const TypeCheck& type_check) {
  if (!node.bodies().empty() || !node.implicit_inputs().empty() || k.kernel->random) return false;
  std::vector<const Tensor*> ins;
  for (const ir::Value* v : node.inputs()) {
    if (v && !fixed_at_plan_time(plan, v)) return false;
    ins.push_back(v ? &plan.constants[static_cast<size_t>(v->id())] : nullptr);
  }
  bool over_memory_limit = false;
  auto outs = invoke_kernel(*k.kernel, k.state.get(), node, version, std::move(ins), type_check, nullptr, 0, nullptr,
                            0, nullptr, &over_memory_limit);
  if (over_memory_limit) {
    const ir::Value* out = node.outputs().empty() ? nullptr : node.outputs()[0];
    return out ? std::move(outs).status().with_context(fmt::format("tensor '{}'", out->name())) : std::move(outs).status();
  }
  if (!outs.is_ok()) return false;
  bool external = false;
  for (const ir::Value* v : node.inputs()) external = external || (v && plan.from_external[static_cast<size_t>(v->id())]);
  for (size_t i = 0; i < node.outputs().size(); ++i)
    if (const ir::Value* v = node.outputs()[i]) {
      plan.constants[static_cast<size_t>(v->id())] = std::move(outs.value()[i]);
      plan.folded_by[static_cast<size_t>(v->id())] = static_cast<int>(plan.folds.size());
      plan.from_external[static_cast<size_t>(v->id())] = external;
    }
  plan.folds.push_back({&node, k.kernel, k.state, version, type_check});
  return true;
}

// The data of a plan-time value the plan does not hold (streamed, or kept as dims only): the initializer read
// again (external data: from its file, through the tensor loader), or the folded node that made it run
// again on its inputs made the same way. Deterministic kernels: the same bits as at plan time.
Result<Tensor> make_again(const Executor::Plan& plan, const ir::Value* v) {
  const size_t id = static_cast<size_t>(v->id());
  const Tensor& held = plan.constants[id];
  if (!plan.streamed[id] && held.defined() && (held.raw() || !held.is_tensor())) return held;
  if (v->is_initializer()) return plan.graph->initializer_tensor(v);
  if (plan.folded_by[id] < 0) return Status(Code::kFailed, fmt::format("'{}' has no value to make again", v->name()));
  const Executor::Plan::Fold& fold = plan.folds[static_cast<size_t>(plan.folded_by[id])];
  std::vector<Tensor> made;
  made.reserve(fold.node->inputs().size());
  std::vector<const Tensor*> ins;
  for (const ir::Value* in : fold.node->inputs()) {
    if (!in) {
      ins.push_back(nullptr);
      continue;
    }
    QONNX_ASSIGN_OR_RETURN(Tensor t, make_again(plan, in));
    made.push_back(std::move(t));
    ins.push_back(&made.back());
  }
  QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, invoke_kernel(*fold.kernel, fold.prepared.get(), *fold.node, fold.version,
                                                                 std::move(ins), fold.type_check));
  for (size_t i = 0; i < fold.node->outputs().size(); ++i)
    if (fold.node->outputs()[i] == v) return std::move(outs[i]);
  return Status(Code::kFailed, fmt::format("'{}' has no value to make again", v->name()));
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (uint64_t{1} << 20));
  return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / (uint64_t{1} << 10));
}

// What the room under the limit must keep free besides the weights the plan holds: one streamed layer at a
// time (its weights read and quantized: two float copies of the largest external initializer) and an eighth
// of the room for activations.
struct StreamingReserve {
  uint64_t bytes = 0;
  std::string largest;  // the largest external initializer
};
StreamingReserve streaming_reserve(const ir::Graph& graph, uint64_t room) {
  uint64_t largest = 0;
  StreamingReserve reserve;
  for (const auto& init : graph.initializers()) {
    if (!init.is_external()) continue;
    const int64_t numel = checked_numel(init.dims());
    const uint64_t bytes = numel > 0 ? static_cast<uint64_t>(numel) * std::max<size_t>(4, dtype_size(init.dtype())) : 0;
    if (bytes > largest) largest = bytes, reserve.largest = init.value->name();
  }
  reserve.bytes = 2 * largest + room / 8;
  return reserve;
}

// `may_stream` (the main graph): when what the plan holds passes the room --max-memory leaves for weights,
// the steps whose constants come from external data are planned in streaming mode (Step::made_per_run).
Result<std::shared_ptr<Executor::Plan>> make_plan(const ir::Model& model, const ir::Graph& graph,
                                                  const KernelRegistry& registry, const std::vector<bool>& exposed,
                                                  Arithmetic arithmetic, bool may_stream) {
  auto plan = std::make_shared<Executor::Plan>();
  plan->graph = &graph;
  plan->arithmetic = arithmetic;
  plan->forms.resize(graph.value_count());
  plan->folded_by.assign(graph.value_count(), -1);
  plan->from_external.assign(graph.value_count(), false);
  plan->streamed.assign(graph.value_count(), false);
  const uint64_t limit = memory_limit();
  may_stream = may_stream && limit != 0;
  const uint64_t in_use_before = memory_in_use();
  const uint64_t room = limit > in_use_before ? limit - in_use_before : 0;
  const StreamingReserve reserve = streaming_reserve(graph, room);
  // What the plan may hold (measured as the growth of memory_in_use while planning).
  const uint64_t weight_budget = room > reserve.bytes ? room - reserve.bytes : 0;
  uint64_t streamed_bytes = 0;  // what the streamed steps would hold
  QONNX_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, topological_order(graph));
  plan->keep.assign(graph.value_count(), false);
  for (size_t id = 0; id < exposed.size() && id < plan->keep.size(); ++id) plan->keep[id] = exposed[id];
  for (const ir::Value* v : graph.outputs())
    if (v->graph() == &graph) plan->keep[static_cast<size_t>(v->id())] = true;
  plan->constants.resize(graph.value_count());
  std::vector<int> last_use(graph.value_count(), -1);
  std::vector<bool> read_per_run(graph.value_count(), false);
  std::vector<bool> shape_read(graph.value_count(), false);  // a step reads only its dtype and dims
  auto note_use = [&](const ir::Value* v, size_t s, bool captured) {
    if (!v || v->graph() != &graph) return;
    last_use[static_cast<size_t>(v->id())] = static_cast<int>(s);
    (captured ? shape_read : read_per_run)[static_cast<size_t>(v->id())] = true;
  };
  // Plan-time values nobody reads per run (a quantizer's float weight) are not held; those whose readers
  // keep what they need of them (integer codes) are held as their dtype and dims only.
  // Streamed values are held as their dtype and dims: the steps that read them make their data per run.
  auto let_go = [&](size_t id) {
    Tensor& t = plan->constants[id];
    if ((read_per_run[id] && !plan->streamed[id]) || plan->keep[id] || !t.defined()) return;
    const bool dims_only = (shape_read[id] || plan->streamed[id]) && t.is_tensor();
    t = dims_only ? Tensor::borrowed(t.dtype(), t.dims(), nullptr, nullptr) : Tensor();
  };
  // Initializers are decoded when a node first reads them (kept ones now), and a plan-time value is let go
  // once its last reader is planned: planning holds about one layer's float weights at a time.
  auto decode = [&](const ir::Value* v) -> Status {
    if (!v || v->graph() != &graph || !v->is_initializer() || plan->constants[static_cast<size_t>(v->id())].defined())
      return Status::ok();
    QONNX_ASSIGN_OR_RETURN(plan->constants[static_cast<size_t>(v->id())], graph.initializer_tensor(v));
    const ir::Initializer* init = graph.initializer(v);
    plan->from_external[static_cast<size_t>(v->id())] = init && init->is_external();
    return Status::ok();
  };
  for (const auto& init : graph.initializers())
    if (plan->keep[static_cast<size_t>(init.value->id())]) QONNX_RETURN_IF_ERROR(decode(init.value));
  std::vector<int> readers_left(graph.value_count(), 0);
  auto for_each_read = [&](const ir::Node* node, auto&& fn) {
    for (const ir::Value* v : node->inputs())
      if (v && v->graph() == &graph) fn(v);
    for (const ir::Value* v : node->implicit_inputs())
      if (v && v->graph() == &graph) fn(v);
  };
  for (const ir::Node* node : order) for_each_read(node, [&](const ir::Value* v) { ++readers_left[static_cast<size_t>(v->id())]; });
  auto planned = [&](const ir::Node* node) {
    for_each_read(node, [&](const ir::Value* v) {
      if (--readers_left[static_cast<size_t>(v->id())] == 0) let_go(static_cast<size_t>(v->id()));
    });
  };
  for (const ir::Node* node : order) {
    Status decoded = Status::ok();
    for_each_read(node, [&](const ir::Value* v) {
      if (decoded.is_ok()) decoded = decode(v);
    });
    QONNX_RETURN_IF_ERROR(decoded);
    QONNX_ASSIGN_OR_RETURN(PreparedKernel k, prepare_kernel(model, *node, registry));
    int64_t version = model.op_version(node->domain());
    TypeCheck type_check = registry.type_check(*node, version);
    derive_forms(*plan, *node, *k.kernel, k.state.get());
    QONNX_ASSIGN_OR_RETURN(bool folded, fold_at_plan_time(*plan, *node, k, version, type_check));
    if (folded) {
      planned(node);
      continue;
    }
    Executor::Plan::Step step{};
    step.node = node, step.kernel = k.kernel, step.prepared = std::move(k.state), step.version = version;
    step.type_check = std::move(type_check);
    uint64_t external_inputs = 0;  // constant inputs made from external data: what streaming would not hold
    for (size_t i = 0; i < node->inputs().size() && i < 64; ++i)
      if (fixed_at_plan_time(*plan, node->inputs()[i])) {
        step.constant_inputs |= uint64_t{1} << i;
        if (plan->from_external[static_cast<size_t>(node->inputs()[i]->id())]) external_inputs |= uint64_t{1} << i;
      }
    const bool streamable = may_stream && external_inputs != 0;
    bool prepack_out_of_room = false;
    try {
      step.prepacked = prepack_step(*plan, step);
    } catch (const MemoryLimitError& e) {
      if (!streamable) return Status(Code::kFailed, e.what()).with_context(node->describe());
      prepack_out_of_room = true;  // streamed: made again per run, when the plan holds less
      step.captured_inputs = 0;
    }
    for (const auto& body : node->bodies()) {
      auto sub = make_plan(model, *body.graph, registry, {}, arithmetic, false);
      if (!sub.is_ok()) return std::move(sub).status().with_context(fmt::format("body '{}'", body.attribute)).with_context(node->describe());
      step.bodies.push_back(std::move(sub).value());
    }
    size_t s = plan->steps.size();
    plan->steps.push_back(std::move(step));
    const uint64_t captured = plan->steps[s].captured_inputs;
    for (size_t i = 0; i < node->inputs().size(); ++i) note_use(node->inputs()[i], s, i < 64 && (captured >> i & 1u));
    for (const ir::Value* v : node->implicit_inputs()) note_use(v, s, false);
    planned(node);
    // Checked as layers are planned: the first step that takes the plan's holdings past the budget, and every
    // later one that can, stream their external constants instead of holding them (or their prepack).
    const auto held_now = [&] { return std::max(memory_in_use(), in_use_before) - in_use_before; };
    const uint64_t held = held_now();
    if (streamable && (prepack_out_of_room || held > weight_budget)) {
      if (room < reserve.bytes)
        return Status(Code::kFailed,
                      fmt::format("tensor '{}': streaming the weights needs room for two float copies of the largest "
                                  "and for the activations ({} bytes), over the memory limit of {} bytes ({} in use)",
                                  reserve.largest, reserve.bytes, limit, in_use_before))
            .with_context(node->describe());
      Executor::Plan::Step& streamed_step = plan->steps[s];
      streamed_step.repack_per_run = streamed_step.prepacked || prepack_out_of_room;
      streamed_step.prepacked.reset();
      for (size_t i = 0; i < node->inputs().size() && i < 64; ++i) {
        if (!(external_inputs >> i & 1u)) continue;
        const size_t id = static_cast<size_t>(node->inputs()[i]->id());
        if (plan->keep[id]) continue;  // held anyway (a graph output, an exposed value)
        plan->streamed[id] = true;
        if (readers_left[id] == 0) let_go(id);
      }
      streamed_bytes += held - std::min(held, held_now());
    }
  }
  if (arithmetic == Arithmetic::kInt) {
    fuse_epilogues(*plan, last_use);
    plan_codes(*plan);
  }
  for (size_t id = 0; id < last_use.size(); ++id) {
    if (last_use[id] < 0 || plan->keep[id]) continue;
    auto& step = plan->steps[static_cast<size_t>(last_use[id])];
    step.release.push_back(static_cast<int>(id));
    // A computed value read for the last time may lend its buffer to the step's output.
    const auto& ins = step.node->inputs();
    if (!plan->constants[id].defined())
      for (size_t k = 0; k < ins.size() && k < 64; ++k)
        if (ins[k] && ins[k]->graph() == &graph && static_cast<size_t>(ins[k]->id()) == id) step.dying_inputs |= uint64_t{1} << k;
  }
  for (size_t id = 0; id < plan->constants.size(); ++id) let_go(id);
  // A constant input whose data the plan does not hold is made per run by the steps that read it: a streamed
  // step (which also makes its prepack again), and a held one that reads the values themselves.
  for (auto& step : plan->steps)
    for (size_t k = 0; k < step.node->inputs().size() && k < 64; ++k) {
      if (!(step.constant_inputs >> k & 1u)) continue;
      const Tensor& t = plan->constants[static_cast<size_t>(step.node->inputs()[k]->id())];
      const bool has_data = t.raw() || !t.is_tensor();
      if (!has_data && (step.repack_per_run || !(step.captured_inputs >> k & 1u))) step.made_per_run |= uint64_t{1} << k;
    }
  if (std::find(plan->streamed.begin(), plan->streamed.end(), true) != plan->streamed.end()) {
    // The external initializers the streamed values are made from.
    std::vector<bool> seen(graph.value_count(), false);
    size_t initializers = 0;
    std::function<void(const ir::Value*)> count_sources = [&](const ir::Value* v) {
      const size_t id = static_cast<size_t>(v->id());
      if (v->graph() != &graph || seen[id] || !plan->from_external[id]) return;
      seen[id] = true;
      if (v->is_initializer()) ++initializers;
      else if (plan->folded_by[id] >= 0)
        for (const ir::Value* in : plan->folds[static_cast<size_t>(plan->folded_by[id])].node->inputs())
          if (in) count_sources(in);
    };
    size_t layers = 0, streamed_layers = 0;
    for (const auto& step : plan->steps) {
      bool any = false;
      for (size_t k = 0; k < step.node->inputs().size() && k < 64; ++k)
        if (step.made_per_run >> k & 1u) {
          count_sources(step.node->inputs()[k]);
          any = any || plan->streamed[static_cast<size_t>(step.node->inputs()[k]->id())];
        }
      streamed_layers += any;
    }
    for (const auto& step : plan->steps)
      for (size_t k = 0; k < step.node->inputs().size() && k < 64; ++k)
        if (step.constant_inputs >> k & 1u && plan->from_external[static_cast<size_t>(step.node->inputs()[k]->id())]) {
          ++layers;
          break;
        }
    const uint64_t held = std::max(memory_in_use(), in_use_before) - in_use_before;
    plan->streaming_note = fmt::format(
        "the weights ({}) exceed what --max-memory ({}) leaves for them ({}): streaming {} initializers ({} of {} "
        "layers) from external data per run",
        bytes_text(held + streamed_bytes), bytes_text(limit), bytes_text(weight_budget), initializers, streamed_layers,
        layers);
  }
  return plan;
}

// The values of one running graph; a body's frame reads enclosing values through `parent`. Released
// values go to `pool`, where later outputs find their buffers.
struct Frame {
  const Executor::Plan* plan;
  const Frame* parent;
  BufferPool* pool;
  std::vector<Tensor> values;
  std::vector<bool> present;
  std::vector<Tensor> codes;  // value id -> its byte codes when a step published them (KernelContext::input_codes)

  Frame(const Executor::Plan& p, const Frame* up, BufferPool* buffers)
      : plan(&p), parent(up), pool(buffers), values(p.graph->value_count()), present(p.graph->value_count(), false),
        codes(p.graph->value_count()) {}

  // A value set in this run, else the plan's.
  const Tensor* find(const ir::Value* v) const {
    const Frame* f = this;
    while (f && f->plan->graph != v->graph()) f = f->parent;
    if (!f) return nullptr;
    size_t id = static_cast<size_t>(v->id());
    if (f->present[id]) return &f->values[id];
    return f->plan->constants[id].defined() ? &f->plan->constants[id] : nullptr;
  }
  void set(const ir::Value* v, Tensor t) {
    values[static_cast<size_t>(v->id())] = std::move(t);
    present[static_cast<size_t>(v->id())] = true;
  }
};

Status run_steps(const Executor::Plan& plan, Frame& frame);

// Runs the bodies of one step, each in a fresh frame under the step's frame.
class StepBodies : public BodyRunner {
 public:
  StepBodies(const Executor::Plan::Step& step, const Frame& frame) : step_(step), frame_(frame) {}

  Result<std::vector<Tensor>> run(const std::string& attribute, const std::vector<Tensor>& inputs) const override {
    const auto& bodies = step_.node->bodies();
    for (size_t b = 0; b < bodies.size(); ++b) {
      if (bodies[b].attribute != attribute || bodies[b].index >= 0) continue;
      const ir::Graph& graph = *bodies[b].graph;
      if (inputs.size() != graph.inputs().size())
        return Status(Code::kInvalidModel, fmt::format("body '{}' declares {} inputs, the node gives {}", attribute,
                                                       graph.inputs().size(), inputs.size()));
      Frame frame(*step_.bodies[b], &frame_, frame_.pool);
      for (size_t i = 0; i < inputs.size(); ++i) frame.set(graph.inputs()[i], inputs[i]);
      QONNX_RETURN_IF_ERROR(run_steps(*step_.bodies[b], frame));
      std::vector<Tensor> outputs;
      for (const ir::Value* v : graph.outputs()) {
        const Tensor* t = frame.find(v);
        if (!t) return Status(Code::kInvalidModel, fmt::format("body '{}' output '{}' is never produced", attribute, v->name()));
        outputs.push_back(*t);
      }
      return outputs;
    }
    return Status(Code::kInvalidModel, fmt::format("the node has no body '{}'", attribute));
  }

 private:
  const Executor::Plan::Step& step_;
  const Frame& frame_;
};

// The prepack of a streamed step, made again from its inputs (the same constants and forms as at plan time,
// so the same state and the same bits as a plan that holds it).
Result<PreparedState> prepack_again(const Executor::Plan& plan, const Executor::Plan::Step& step,
                                    const std::vector<const Tensor*>& inputs) {
  PrepackContext context = plan_context(plan, *step.node, step.prepared.get());
  for (size_t k = 0; k < context.constants.size() && k < inputs.size(); ++k)
    if (context.constants[k]) context.constants[k] = inputs[k];
  try {
    return step.kernel->prepack(context);
  } catch (const MemoryLimitError& e) {
    return Status(Code::kFailed, e.what()).with_context(step.node->describe());
  } catch (const std::exception&) {
    return PreparedState();  // the run goes without it, as at plan time
  }
}

// The output of a step's fused nodes from the step's output 0 `out`: when the step applied their epilogue,
// `out` is it (the fused nodes' type checks still run); else their kernels run on it one after the other.
Result<Tensor> finish_fused(const Executor::Plan::Step& step, const Frame& frame, bool applied, Tensor out) {
  std::vector<const Tensor*> ins;
  for (const auto& f : step.fused) {
    ins.assign(1, &out);
    for (size_t k = 1; k < f.node->inputs().size(); ++k) ins.push_back(f.node->inputs()[k] ? frame.find(f.node->inputs()[k]) : nullptr);
    if (applied) {
      if (f.type_check) {
        const std::vector<Tensor> outs{out};
        Status checked = f.type_check(ins, &outs);
        if (!checked.is_ok()) return std::move(checked).with_context(f.node->describe());
      }
      continue;
    }
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs, invoke_kernel(*f.kernel, f.prepared.get(), *f.node, f.version, ins,
                                                                   f.type_check, nullptr, 1, frame.pool, f.constant_inputs));
    out = std::move(outs[0]);
  }
  return out;
}

Status run_steps(const Executor::Plan& plan, Frame& frame) {
  std::vector<const Tensor*> ins;
  std::vector<Tensor> made;  // a streamed step's constants, dropped once it has run
  for (const auto& step : plan.steps) {
    const ir::Node& node = *step.node;
    ins.clear();
    made.clear();
    made.reserve(node.inputs().size());
    for (size_t k = 0; k < node.inputs().size(); ++k) {
      const ir::Value* v = node.inputs()[k];
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      if (k < 64 && (step.made_per_run >> k & 1u)) {
        QONNX_ASSIGN_OR_RETURN(Tensor t, make_again(plan, v));
        made.push_back(std::move(t));
        ins.push_back(&made.back());
        continue;
      }
      const Tensor* t = frame.find(v);
      if (!t)
        return Status(Code::kInvalidModel, fmt::format("input #{} '{}' has no value", k, v->name())).with_context(node.describe());
      ins.push_back(t);
    }
    PreparedState repacked;
    if (step.repack_per_run) {
      QONNX_ASSIGN_OR_RETURN(repacked, prepack_again(plan, step, ins));
    }
    StepBodies bodies(step, frame);
    bool applied = false;
    // Input i's codes when the plan gives them and its producer published them this run.
    const auto codes_of = [&](bool given, size_t i) -> const Tensor* {
      if (!given) return nullptr;
      const Tensor& c = frame.codes[static_cast<size_t>(node.inputs()[i]->id())];
      return c.defined() ? &c : nullptr;
    };
    const Tensor* input_codes = codes_of(step.given_codes, 0);
    const Tensor* input1_codes = codes_of(step.given_input1_codes, 1);
    Tensor codes;
    QONNX_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           invoke_kernel(*step.kernel, step.prepared.get(), node, step.version, ins, step.type_check,
                                         step.bodies.empty() ? nullptr : &bodies, step.dying_inputs, frame.pool,
                                         step.constant_inputs, step.repack_per_run ? repacked.get() : step.prepacked.get(),
                                         nullptr, step.epilogue.get(), &applied, step.codes_form, step.floats_needed,
                                         input_codes, &codes, step.codes_layout, input1_codes));
    if (!step.fused.empty()) {
      // Codes are of the final output: a run that left the fused nodes to the executor published none.
      QONNX_ASSIGN_OR_RETURN(Tensor last, finish_fused(step, frame, applied, std::move(outs[0])));
      frame.set(step.fused.back().node->outputs()[0], std::move(last));
    } else {
      for (size_t k = 0; k < node.outputs().size(); ++k)
        if (const ir::Value* v = node.outputs()[k]) frame.set(v, std::move(outs[k]));
    }
    if (codes.defined() && step.codes_form && (step.fused.empty() || applied))
      frame.codes[static_cast<size_t>(final_output(step)->id())] = std::move(codes);
    for (int id : step.release) {
      frame.pool->give(std::exchange(frame.values[static_cast<size_t>(id)], Tensor()));
      frame.codes[static_cast<size_t>(id)] = Tensor();
    }
    made.clear();
  }
  return Status::ok();
}

}  // namespace

Result<Executor> Executor::create(const ir::Model& model, const KernelRegistry& registry) {
  return create(model, Arithmetic::kInt, registry);
}

Result<Executor> Executor::create(const ir::Model& model, Arithmetic arithmetic, const KernelRegistry& registry) {
  Executor ex;
  ex.model_ = &model;
  ex.registry_ = &registry;
  ex.arithmetic_ = arithmetic;
  QONNX_ASSIGN_OR_RETURN(ex.plan_, make_plan(model, model.graph(), registry, {}, arithmetic, true));
  return ex;
}

const std::string& Executor::streaming_note() const { return plan_->streaming_note; }

std::vector<std::pair<std::string, std::string>> Executor::path_notes() const {
  std::vector<std::pair<std::string, std::string>> notes;
  for (const auto& step : plan_->steps) {
    if (step.path_note.empty()) continue;
    std::string note = step.path_note;
    if (step.given_codes) note += "; byte codes in";
    if (step.given_input1_codes) note += "; B's byte codes in";
    if (step.codes_form) note += step.codes_layout == CodesLayout::kAsStored ? "; byte codes out" : "; byte codes out (channels-last)";
    if (step.made_per_run) note += " (weights streamed from external data per run)";
    notes.emplace_back(step.node->describe(), std::move(note));
  }
  return notes;
}

Status Executor::expose(const std::vector<std::string>& names) {
  if (names.empty()) return Status::ok();
  std::vector<bool> exposed = plan_->keep;
  const size_t exposed_before = exposed_.size();
  for (const auto& n : names) {
    const ir::Value* v = model_->graph().find_value(n);
    if (!v) return Status(Code::kUsage, fmt::format("no tensor named '{}' in the graph to expose", n));
    exposed[static_cast<size_t>(v->id())] = true;
    exposed_.push_back(n);
  }
  // Planned again so the exposed plan-time values are held too; the old plan goes first, so that the new
  // one's streaming decisions (made on the memory in use) see the room the old one held.
  std::vector<bool> kept = plan_->keep;
  plan_.reset();
  auto replanned = make_plan(*model_, model_->graph(), *registry_, exposed, arithmetic_, true);
  if (!replanned.is_ok()) {
    exposed_.resize(exposed_before);
    QONNX_ASSIGN_OR_RETURN(plan_, make_plan(*model_, model_->graph(), *registry_, kept, arithmetic_, true));
    return std::move(replanned).status();
  }
  plan_ = std::move(replanned).value();
  return Status::ok();
}

Status check_input_against_declared(const ir::Graph& graph, const ir::Value* input, const Tensor& tensor,
                                    bool check_shape) {
  auto type = graph.type_of(input);
  if (!type) return Status::ok();
  if (type->dtype != DType::kUndefined && type->dtype != tensor.dtype())
    return Status(Code::kInvalidModel, fmt::format("graph input '{}' is {}, got a {} tensor", input->name(),
                                                   dtype_name(type->dtype), dtype_name(tensor.dtype())));
  if (type->has_shape && check_shape) {
    bool ok = type->dims.size() == tensor.rank();
    for (size_t i = 0; ok && i < type->dims.size(); ++i)
      ok = type->dims[i] < 0 || type->dims[i] == tensor.dim(i);
    if (!ok) {
      std::vector<std::string> declared;
      for (size_t i = 0; i < type->dims.size(); ++i)
        declared.push_back(type->dims[i] >= 0 ? std::to_string(type->dims[i])
                                              : (type->dim_params[i].empty() ? "?" : type->dim_params[i]));
      return Status(Code::kInvalidModel, fmt::format("graph input '{}' has shape [{}], got {}", input->name(),
                                                     fmt::join(declared, ", "), dims_to_string(tensor.dims())));
    }
  }
  return Status::ok();
}

Result<RunResult> Executor::run(const std::map<std::string, Tensor>& inputs) const {
  const ir::Graph& graph = model_->graph();
  Frame frame(*plan_, nullptr, pool_.get());
  for (const auto& [name, tensor] : inputs) {
    const ir::Value* v = graph.find_value(name);
    if (!v || !v->is_graph_input())
      return Status(Code::kUsage, fmt::format("'{}' is not an input of the graph", name));
    if (v->is_initializer())
      return Status(Code::kUsage, fmt::format("graph input '{}' is an initializer: exec takes it as a constant "
                                              "(folded at plan time) and cannot override it", name));
    QONNX_RETURN_IF_ERROR(check_input_against_declared(graph, v, tensor, check_input_shapes_));
    frame.set(v, tensor);
  }
  for (const ir::Value* v : graph.runtime_inputs())
    if (!frame.present[static_cast<size_t>(v->id())])
      return Status(Code::kUsage, fmt::format("graph input '{}' was not given", v->name()));

  const Status ran = run_steps(*plan_, frame);
  pool_->end_run();
  QONNX_RETURN_IF_ERROR(ran);

  RunResult result;
  for (const ir::Value* v : graph.outputs()) {
    const Tensor* t = frame.find(v);
    if (!t) return Status(Code::kInvalidModel, fmt::format("graph output '{}' is never produced", v->name()));
    result.outputs.push_back(*t);
  }
  for (const auto& n : exposed_) {
    const Tensor* t = frame.find(graph.find_value(n));
    result.exposed[n] = t ? *t : Tensor();
  }
  return result;
}

}  // namespace qonnx::exec
