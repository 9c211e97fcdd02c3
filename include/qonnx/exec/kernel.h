// Kernel interface and registry. `exec` and constant folding look kernels up here, so both compute
// the same numbers. Kernels are keyed by (domain, op_type) and a version range [since, until]; the
// lookup takes the entry with the largest since <= the model's version for that domain, if its range
// covers the version. A kernel may parse its attributes once per node at plan time ("prepare") into
// a typed struct that every run receives, and may derive something from its plan-time constant inputs
// once ("prepack", e.g. a weight in the layout its loops read) that every run of the plan receives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/core.h>

#include "qonnx/exec/arithmetic.h"
#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::exec {

// Runs the bodies of the node being executed (If/Loop/Scan); the executor provides it.
class BodyRunner {
 public:
  virtual ~BodyRunner() = default;
  // Runs the body held by GRAPH attribute `attribute` with its graph inputs bound in order; returns
  // its graph outputs in order.
  virtual Result<std::vector<Tensor>> run(const std::string& attribute, const std::vector<Tensor>& inputs) const = 0;
};

class BufferPool;
struct IntegerForm;

// How a value's byte codes (KernelContext::input_codes) are laid out: channels-last, (N, d..., C) for an
// (N, C, d...) value, as convolutions and pools read them; or in the value's own order, as matrix products
// read their rows. The two are the same order up to rank 2.
enum class CodesLayout : uint8_t { kChannelsLast, kAsStored };

// "input #i 'name'" (or "input #i" when omitted): how errors about a node's input name it.
std::string input_label(const ir::Node& node, size_t i);
// `t` (input #i of a node), or an error "input #i (what) is required" when it is missing.
Result<const Tensor*> required_input(const Tensor* t, size_t i, const char* what);

// A kernel's plan-time state for one node (its parsed attributes); type-erased in the registry.
using PreparedState = std::shared_ptr<const void>;

// An elementwise node fused into the layer that feeds it (the executor fuses `Conv -> Relu -> Quant`
// chains, docs/arithmetic.md): apply(y, n) sets y[i] = f(y[i]) for i < n in place, on any contiguous run
// of the layer's float32 output, with the fused node's own kernel loops, so a layer that applies it to
// each block of its output while the block is in cache gives the bits the separate steps give.
class Epilogue {
 public:
  virtual ~Epilogue() = default;
  virtual void apply(float* y, int64_t n) const = 0;
  // The fused nodes' own epilogues, in order (a layer may run recognized ones in registers with its rounding).
  virtual std::vector<const Epilogue*> parts() const { return {this}; }
};

class KernelContext {
 public:
  // No version and no attribute access: a kernel's version range and its plan-time state (parsed
  // attributes) say everything a run may depend on.
  KernelContext(const ir::Node& node, std::vector<const Tensor*> inputs, const void* prepared = nullptr)
      : node_(node), inputs_(std::move(inputs)), outputs_(node.outputs().size()), prepared_(prepared) {}

  // The node, for error messages and for passes that inspect it (kernels read attributes at plan time).
  const ir::Node& node() const { return node_; }
  // The struct the kernel's prepare function made for this node (typed_kernel passes it to Run).
  const void* prepared() const { return prepared_; }
  // What the kernel's prepack function made from this step's plan-time constant inputs; nullptr when
  // it has none, made none, or the kernel runs outside a plan (constant folding, evaluate_node).
  const void* prepacked() const { return prepacked_; }
  void set_prepacked(const void* prepacked) { prepacked_ = prepacked; }

  // The elementwise nodes fused after this layer, as one epilogue (nullptr: none). A kernel whose prepack
  // said it takes epilogues (PrepackContext::takes_epilogue) applies it to every element of output 0 and
  // then calls epilogue_done(); when it does not (a run on another path), the executor runs the fused
  // nodes' kernels on the output as separate steps.
  const Epilogue* epilogue() const { return epilogue_; }
  void set_epilogue(const Epilogue* epilogue) { epilogue_ = epilogue; }
  void epilogue_done() { epilogue_done_ = true; }
  bool epilogue_applied() const { return epilogue_done_; }

  // Byte codes (docs/arithmetic.md): for a value with a byte form (one scale, at most 256 integers v in
  // [lo, hi] including 0), the bytes u = v - lo that the integer path computes from its floats, in a
  // CodesLayout: channels-last for the convolutions and pools, the value's own order for the matrix
  // products. A layer that makes its output's floats can make these from them in cache; the layer reading
  // them then skips that pass (and the transpose).
  // Set by the executor: input 0's codes, in the layout the reader's prepack said it reads, or nullptr. A
  // kernel whose prepack said it reads them (PrepackContext::reads_input_codes) must take them when given:
  // input 0's floats may be unwritten.
  const Tensor* input_codes() const { return input_codes_; }
  // The same for input 1 (a runtime right operand), in its own order; a kernel whose prepack said it reads
  // them (PrepackContext::reads_input1_codes) must take them when given.
  const Tensor* input1_codes() const { return input1_codes_; }
  void set_input_codes(const Tensor* codes, const Tensor* input1_codes = nullptr) {
    input_codes_ = codes;
    input1_codes_ = input1_codes;
  }
  // Set by the executor: the form of output 0 (after the fused nodes) whose codes to publish, or nullptr,
  // and their layout (one the prepack said the kernel writes); with `floats_needed` false every reader takes
  // the codes, so a kernel that publishes them may leave output 0's elements unwritten (its dims and dtype
  // are still read).
  void request_output_codes(const IntegerForm* form, bool floats_needed,
                            CodesLayout layout = CodesLayout::kChannelsLast) {
    codes_form_ = form;
    floats_needed_ = floats_needed;
    codes_layout_ = layout;
  }
  const IntegerForm* output_codes_form() const { return codes_form_; }
  CodesLayout output_codes_layout() const { return codes_layout_; }
  bool output_floats_needed() const { return floats_needed_ || !codes_form_; }
  // Published by a kernel asked for them: output 0's codes (uint8, in the layout asked for), computed as the
  // integer path computes them from output 0's floats. Not published: output 0's floats are all written.
  void set_output_codes(Tensor codes) { output_codes_ = std::move(codes); }
  Tensor& output_codes() { return output_codes_; }

  size_t num_inputs() const { return inputs_.size(); }
  // Every input, nullptr where omitted.
  const std::vector<const Tensor*>& inputs() const { return inputs_; }
  // nullptr when the input is omitted ("" or past the end).
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // The input, or an error "input #i (what) is required".
  Result<const Tensor*> required(size_t i, const char* what) const;

  size_t num_outputs() const { return outputs_.size(); }
  void set_output(size_t i, Tensor t) {
    if (i < outputs_.size()) outputs_[i] = std::move(t);
  }
  std::vector<Tensor>& outputs() { return outputs_; }

  // Storage for an output whose every element the kernel writes: not zero-filled, and when one of the
  // inputs in `reuse` dies at this node, has the same dtype and dims and nobody else holds its buffer,
  // that buffer itself (in place: the kernel must read element i of that input, and nothing past it,
  // before writing element i of the output); else a buffer released earlier (the executor's pool),
  // else a new one. One output per call.
  Tensor output_buffer(DType dtype, const Dims& dims, std::initializer_list<size_t> reuse = {}) const;
  // Set by the executor, bit i for input i: its value is not read after this node (a candidate for
  // output_buffer).
  void set_dying_inputs(uint64_t mask) { dying_ = mask; }
  // Set by the executor, bit i for input i: a plan-time constant (an initializer or a folded result),
  // the same tensor at the same address in every run, so a kernel may keep something derived from it
  // (a repacked weight) in its plan-time state.
  void set_constant_inputs(uint64_t mask) { constant_ = mask; }
  bool input_is_constant(size_t i) const { return i < 64 && (constant_ >> i & 1u); }
  // Set by the executor: where output_buffer finds released buffers (none: always a new one).
  void set_buffer_pool(BufferPool* pool) { pool_ = pool; }

  // Runs a body of this node (error when the node is evaluated outside the executor).
  void set_body_runner(const BodyRunner* runner) { bodies_ = runner; }
  Result<std::vector<Tensor>> run_body(const std::string& attribute, const std::vector<Tensor>& inputs) const;

  // Error about input #i: "input #i 'name': message".
  template <typename... Args>
  Status input_error(Code code, size_t i, fmt::format_string<Args...> f, Args&&... args) const {
    return Status(code, fmt::format(f, std::forward<Args>(args)...)).with_context(input_label(i));
  }
  template <typename... Args>
  Status error(Code code, fmt::format_string<Args...> f, Args&&... args) const {
    return Status(code, fmt::format(f, std::forward<Args>(args)...));
  }
  std::string input_label(size_t i) const;

 private:
  const ir::Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  const void* prepared_ = nullptr;
  const void* prepacked_ = nullptr;
  const Epilogue* epilogue_ = nullptr;
  bool epilogue_done_ = false;
  const Tensor* input_codes_ = nullptr;
  const Tensor* input1_codes_ = nullptr;
  const IntegerForm* codes_form_ = nullptr;
  bool floats_needed_ = true;
  CodesLayout codes_layout_ = CodesLayout::kChannelsLast;
  Tensor output_codes_;
  uint64_t dying_ = 0;     // bit i: input i dies here (inputs past 63 are never reused)
  uint64_t constant_ = 0;  // bit i: input i is a plan-time constant
  BufferPool* pool_ = nullptr;
  const BodyRunner* bodies_ = nullptr;
};

using KernelFn = Status (*)(KernelContext&);
// Parses `node`'s attributes for `version` once, at plan time; errors name the attribute.
using PrepareFn = Result<PreparedState> (*)(const ir::Node& node, int64_t version);

// What the plan knows of a value's numbers: every element is v * scale with v an integer in [lo, hi]
// (a quantizer's output with its zero point inside v = code - zero_point), and computing v * scale in
// float32 gives the element exactly as the value holds it. One scale (axis < 0), or one per index of
// dimension `axis`.
struct IntegerForm {
  int64_t lo = 0, hi = 0;
  int axis = -1;
  std::vector<float> scales;
  bool per_tensor() const { return axis < 0; }
};

// What a prepack function sees of one plan step.
struct PrepackContext {
  const ir::Node* node = nullptr;
  const void* prepared = nullptr;           // the node's prepare state (nullptr without a prepare function)
  std::vector<const Tensor*> constants;      // per input: its plan-time tensor, nullptr when not constant
  std::vector<const IntegerForm*> forms;     // per input: its integer form, nullptr when none is known
  Arithmetic arithmetic = Arithmetic::kInt;
  // Where the kernel says which path the step takes and why, one line ("integer: ...", "float: ...");
  // left empty by kernels with one path.
  std::string* path_note = nullptr;
  // Where the kernel sets bit i when its runs read only constant input i's dtype and dims (it keeps what it
  // needs of the values itself, e.g. the weights' integer codes): the plan then holds no data for a constant
  // whose every reader says so, and passes a tensor with its dtype and dims only.
  uint64_t* captured_inputs = nullptr;
  // Where a layer's prepack says its runs write a float32 output 0 and apply KernelContext::epilogue() to
  // it on the path the prepack chose: the executor may then fuse the elementwise nodes that follow.
  bool* takes_epilogue = nullptr;
  // Where a layer's prepack says its runs take input 0's byte codes when given (KernelContext::input_codes),
  // in which layout (channels-last unless it says otherwise), and that they publish output 0's codes when
  // asked (KernelContext::request_output_codes): channels-last (writes_output_codes), in the value's own
  // order (writes_stored_codes), or either.
  bool* reads_input_codes = nullptr;
  CodesLayout* input_codes_layout = nullptr;
  // Where a matrix product's prepack says its runs take input 1's byte codes when given, in its own order.
  bool* reads_input1_codes = nullptr;
  bool* writes_output_codes = nullptr;
  bool* writes_stored_codes = nullptr;
  const Tensor* constant(size_t i) const { return i < constants.size() ? constants[i] : nullptr; }
  const IntegerForm* form(size_t i) const { return i < forms.size() ? forms[i] : nullptr; }
};

// Plan-time work on a node's constant inputs and the integer forms of its inputs: the executor calls it
// once per plan step whose node has at least one input fixed at plan time (an initializer or a value
// computed from initializers only) or, under Arithmetic::kInt, one input with an integer form. What it
// returns (nullptr: nothing) the step keeps and every run reads as KernelContext::prepacked(). Under
// kFloat it must not change a bit of the output: a run with it gives what the same run without it
// gives; under kInt it may choose the integer path the arithmetic documents. It reports no errors (the
// run reports them, as without a prepack); an exception is taken as nullptr.
using PrepackFn = PreparedState (*)(const PrepackContext& context);

// The integer forms of a node's outputs (one entry per output, nullopt: none), from its inputs' forms and
// plan-time constants: the executor calls it under Arithmetic::kInt for every node, in order, so forms
// flow from the quantizers through the ops that keep them (Relu, MaxPool, Reshape, ...) to the layers.
// It must only claim what the kernel's output holds bit for bit.
using IntegerFormFn = std::vector<std::optional<IntegerForm>> (*)(const PrepackContext& context);

// The node as an epilogue of the layer feeding its input 0 (a float32 tensor), from its plan-time constant
// inputs: nullptr unless its output is elementwise in input 0 alone (same dims, float32) with what the
// plan holds now, and its kernel would accept those inputs.
using EpilogueFn = std::shared_ptr<const Epilogue> (*)(const PrepackContext& context);

// Forms of the ops that move or select their input's elements without changing them (Identity, Reshape,
// Flatten, Squeeze, Unsqueeze, Transpose, MaxPool, ...): input 0's form when it has one scale.
std::vector<std::optional<IntegerForm>> same_per_tensor_form(const PrepackContext& context);
// Relu: input 0's form (any axis) with its bounds clipped at 0.
std::vector<std::optional<IntegerForm>> relu_form(const PrepackContext& context);

// The newest ONNX opset a kernel range may name when it has no upper bound.
inline constexpr int kNoUpperVersion = 1 << 30;

struct VersionRange {
  int since = 1;
  int until = kNoUpperVersion;  // inclusive
};

struct Kernel {
  KernelFn run = nullptr;
  PrepareFn prepare = nullptr;  // nullptr: the kernel reads its attributes from the node itself
  VersionRange versions;
  PrepackFn prepack = nullptr;  // nullptr: nothing is derived from constant inputs
  // Takes sequence and optional values (Tensor::kind) as inputs: the sequence and optional ops,
  // Identity, Loop. The executor rejects a container input of any other kernel.
  bool containers = false;
  // Draws random numbers (Bernoulli): never run at plan time, even on constant inputs.
  bool random = false;
  IntegerFormFn integer_forms = nullptr;  // nullptr: the outputs have no integer form
  EpilogueFn epilogue = nullptr;          // nullptr: never fused into the layer before it
};

// `kernel` marked as taking sequence and optional inputs.
inline Kernel with_containers(Kernel kernel) {
  kernel.containers = true;
  return kernel;
}

// A kernel with typed plan-time state: `Prepare(node, version)` returns a State once per node,
// `Run(ctx, state)` runs with it. Both are function pointers so the registry stays a table.
template <typename State, Result<State> (*Prepare)(const ir::Node&, int64_t), Status (*Run)(KernelContext&, const State&)>
Kernel typed_kernel() {
  Kernel k;
  k.prepare = [](const ir::Node& node, int64_t version) -> Result<PreparedState> {
    Result<State> state = Prepare(node, version);
    if (!state.is_ok()) return state.status();
    return PreparedState(std::make_shared<const State>(std::move(state).value()));
  };
  k.run = [](KernelContext& ctx) { return Run(ctx, *static_cast<const State*>(ctx.prepared())); };
  return k;
}

struct KernelKey {
  std::string domain;
  std::string op_type;
  bool operator<(const KernelKey& o) const { return std::tie(domain, op_type) < std::tie(o.domain, o.op_type); }
};

// A node's ONNX type constraints, resolved once at plan time: checks input (and, when given, output)
// element types as a standard runtime does. Provided by the schemas layer (qonnx::register_all).
using TypeCheck = std::function<Status(const std::vector<const Tensor*>& inputs, const std::vector<Tensor>* outputs)>;
// The check for `node` at `version`; an empty TypeCheck when no schema is known (nothing is checked).
using TypeCheckFactory = std::function<TypeCheck(const ir::Node& node, int64_t version)>;

class KernelRegistry {
 public:
  // Registers `kernel` for the versions in `versions` (kernel.versions is overwritten). "" and "ai.onnx"
  // are one domain.
  void add(const std::string& domain, const std::string& op_type, VersionRange versions, Kernel kernel);
  // A kernel without attributes (nothing to prepare) for the versions in `versions`.
  void add(const std::string& domain, const std::string& op_type, VersionRange versions, KernelFn fn) {
    add(domain, op_type, versions, Kernel{fn, nullptr, {}});
  }

  // Sets the integer-form function of every registered version of (domain, op_type).
  void set_integer_forms(const std::string& domain, const std::string& op_type, IntegerFormFn forms);

  // The kernel covering `version`, or nullptr.
  const Kernel* find(const std::string& domain, const std::string& op_type, int64_t version) const;
  // Error for an op without a kernel: names op, domain and version, lists what the domain has.
  Status unsupported(const std::string& domain, const std::string& op_type, int64_t version) const;
  std::vector<std::string> ops_in_domain(const std::string& domain) const;
  size_t size() const { return kernels_.size(); }
  // Every registered version range of (domain, op_type), ascending.
  std::vector<VersionRange> version_ranges(const std::string& domain, const std::string& op_type) const;

  void set_type_checks(TypeCheckFactory factory) { type_checks_ = std::move(factory); }
  TypeCheck type_check(const ir::Node& node, int64_t version) const {
    return type_checks_ ? type_checks_(node, version) : TypeCheck();
  }

  // The registry with every kernel family registered (built once).
  // The process-wide registry: empty until the tool or a test calls qonnx::register_all().
  static KernelRegistry& global();

 private:
  std::map<KernelKey, std::map<int, Kernel>> kernels_;  // by since
  TypeCheckFactory type_checks_;
};

}  // namespace qonnx::exec
