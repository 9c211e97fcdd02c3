// Kernel interface and registry. `exec` and constant folding look kernels up here, so both compute
// the same numbers. Kernels are keyed by (domain, op_type, since_version); the lookup takes the
// largest since_version <= the model's version for that domain.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/core.h>

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

class KernelContext {
 public:
  KernelContext(const ir::Node& node, int64_t op_version, std::vector<const Tensor*> inputs)
      : node_(node), op_version_(op_version), inputs_(std::move(inputs)), outputs_(node.outputs().size()) {}

  const ir::Node& node() const { return node_; }
  int64_t op_version() const { return op_version_; }

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr when the input is omitted ("" or past the end).
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // The input, or an error "input #i (what) is required".
  Result<const Tensor*> required(size_t i, const char* what) const;

  size_t num_outputs() const { return outputs_.size(); }
  void set_output(size_t i, Tensor t) {
    if (i < outputs_.size()) outputs_[i] = std::move(t);
  }
  std::vector<Tensor>& outputs() { return outputs_; }

  // Attribute shortcuts.
  int64_t attr_int(const std::string& n, int64_t d) const { return node_.attr_int(n, d); }
  float attr_float(const std::string& n, float d) const { return node_.attr_float(n, d); }
  std::string attr_string(const std::string& n, const std::string& d) const { return node_.attr_string(n, d); }
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& d = {}) const {
    return node_.attr_ints(n, d);
  }
  std::vector<float> attr_floats(const std::string& n, const std::vector<float>& d = {}) const {
    return node_.attr_floats(n, d);
  }
  bool has_attr(const std::string& n) const { return node_.has_attr(n); }

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
  int64_t op_version_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  const BodyRunner* bodies_ = nullptr;
};

using KernelFn = Status (*)(KernelContext&);

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
  // Registers `fn` for versions >= since_version of (domain, op_type). "" and "ai.onnx" are one domain.
  void add(const std::string& domain, const std::string& op_type, int since_version, KernelFn fn);

  KernelFn find(const std::string& domain, const std::string& op_type, int64_t version) const;
  // Error for an op without a kernel: names op, domain and version, lists what the domain has.
  Status unsupported(const std::string& domain, const std::string& op_type, int64_t version) const;
  std::vector<std::string> ops_in_domain(const std::string& domain) const;
  size_t size() const { return kernels_.size(); }

  void set_type_checks(TypeCheckFactory factory) { type_checks_ = std::move(factory); }
  TypeCheck type_check(const ir::Node& node, int64_t version) const {
    return type_checks_ ? type_checks_(node, version) : TypeCheck();
  }

  // The registry with every kernel family registered (built once).
  // The process-wide registry: empty until the tool or a test calls qonnx::register_all().
  static KernelRegistry& global();

 private:
  std::map<KernelKey, std::map<int, KernelFn>> kernels_;
  TypeCheckFactory type_checks_;
};

}  // namespace qonnx::exec
