#include "qonnx/exec/kernel.h"

#include <fmt/format.h>


namespace qonnx::exec {

Result<std::vector<Tensor>> KernelContext::run_body(const std::string& attribute, const std::vector<Tensor>& inputs) const {
  if (!bodies_) return Status(Code::kUnsupported, fmt::format("body '{}' can only run inside the executor", attribute));
  return bodies_->run(attribute, inputs);
}

std::string KernelContext::input_label(size_t i) const {
  const ir::Value* v = node_.input(i);
  return v ? fmt::format("input #{} '{}'", i, v->name()) : fmt::format("input #{}", i);
}

Result<const Tensor*> KernelContext::required(size_t i, const char* what) const {
  const Tensor* t = input(i);
  if (!t) return Status(Code::kInvalidModel, fmt::format("input #{} ({}) is required", i, what));
  return t;
}

void KernelRegistry::add(const std::string& domain, const std::string& op_type, int since_version, KernelFn fn) {
  kernels_[KernelKey{ir::canonical_domain(domain), op_type}][since_version] = fn;
}

KernelFn KernelRegistry::find(const std::string& domain, const std::string& op_type, int64_t version) const {
  auto it = kernels_.find(KernelKey{ir::canonical_domain(domain), op_type});
  if (it == kernels_.end()) return nullptr;
  auto v = it->second.upper_bound(static_cast<int>(version));
  if (v == it->second.begin()) return nullptr;
  return std::prev(v)->second;
}

std::vector<std::string> KernelRegistry::ops_in_domain(const std::string& domain) const {
  std::vector<std::string> ops;
  std::string d = ir::canonical_domain(domain);
  for (const auto& [key, versions] : kernels_)
    if (key.domain == d) ops.push_back(key.op_type);
  return ops;
}

Status KernelRegistry::unsupported(const std::string& domain, const std::string& op_type, int64_t version) const {
  std::string d = domain.empty() ? "ai.onnx" : domain;
  auto it = kernels_.find(KernelKey{ir::canonical_domain(domain), op_type});
  if (it != kernels_.end()) {
    return Status(Code::kUnsupported,
                  fmt::format("no kernel for {}::{} at version {}: the earliest supported version is {}", d,
                              op_type, version, it->second.begin()->first));
  }
  auto ops = ops_in_domain(domain);
  std::string listing = ops.empty() ? "no ops (unknown domain)" : fmt::format("{}", fmt::join(ops, " "));
  return Status(Code::kUnsupported, fmt::format("unsupported op {}::{} (version {}); domain '{}' supports: {}", d,
                                                op_type, version, d, listing));
}

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry registry;
  return registry;
}

}  // namespace qonnx::exec
