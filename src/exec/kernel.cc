#include "qonnx/exec/kernel.h"

#include <algorithm>

#include "qonnx/exec/buffer_pool.h"

#include <fmt/format.h>


namespace qonnx::exec {

Result<std::vector<Tensor>> KernelContext::run_body(const std::string& attribute, const std::vector<Tensor>& inputs) const {
  if (!bodies_) return Status(Code::kUnsupported, fmt::format("body '{}' can only run inside the executor", attribute));
  return bodies_->run(attribute, inputs);
}

std::string input_label(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  return v ? fmt::format("input #{} '{}'", i, v->name()) : fmt::format("input #{}", i);
}

std::string KernelContext::input_label(size_t i) const { return exec::input_label(node_, i); }

Result<const Tensor*> required_input(const Tensor* t, size_t i, const char* what) {
  if (!t) return Status(Code::kInvalidModel, fmt::format("input #{} ({}) is required", i, what));
  return t;
}

Result<const Tensor*> KernelContext::required(size_t i, const char* what) const { return required_input(input(i), i, what); }

Tensor KernelContext::output_buffer(DType dtype, const Dims& dims, std::initializer_list<size_t> reuse) const {
  for (size_t i : reuse) {
    if (i >= 64 || !(dying_ >> i & 1u) || i >= inputs_.size() || !inputs_[i]) continue;
    const Tensor& in = *inputs_[i];
    if (in.dtype() == dtype && in.dims() == dims && in.storage_unique()) return in;
  }
  if (pool_) {
    Tensor kept = pool_->take(dtype, dims);
    if (kept.defined()) return kept;
  }
  return Tensor::uninitialized(dtype, dims);
}

void KernelRegistry::add(const std::string& domain, const std::string& op_type, VersionRange versions, Kernel kernel) {
  kernel.versions = versions;
  kernels_[KernelKey{ir::canonical_domain(domain), op_type}][versions.since] = kernel;
}

void KernelRegistry::set_integer_forms(const std::string& domain, const std::string& op_type, IntegerFormFn forms) {
  auto it = kernels_.find(KernelKey{ir::canonical_domain(domain), op_type});
  if (it == kernels_.end()) return;
  for (auto& entry : it->second) entry.second.integer_forms = forms;
}

std::vector<std::optional<IntegerForm>> same_per_tensor_form(const PrepackContext& context) {
  std::vector<std::optional<IntegerForm>> out(context.node->outputs().size());
  const IntegerForm* in = context.form(0);
  if (in && in->per_tensor() && !out.empty()) out[0] = *in;
  return out;
}

std::vector<std::optional<IntegerForm>> relu_form(const PrepackContext& context) {
  std::vector<std::optional<IntegerForm>> out(context.node->outputs().size());
  const IntegerForm* in = context.form(0);
  if (!in || out.empty()) return out;
  // max(v * s, 0) = max(v, 0) * s needs s > 0.
  for (float s : in->scales)
    if (!(s > 0.0f)) return out;
  IntegerForm f = *in;
  f.lo = std::max<int64_t>(f.lo, 0);
  f.hi = std::max<int64_t>(f.hi, 0);
  out[0] = std::move(f);
  return out;
}

const Kernel* KernelRegistry::find(const std::string& domain, const std::string& op_type, int64_t version) const {
  auto it = kernels_.find(KernelKey{ir::canonical_domain(domain), op_type});
  if (it == kernels_.end()) return nullptr;
  auto v = it->second.upper_bound(static_cast<int>(std::min<int64_t>(version, kNoUpperVersion)));
  if (v == it->second.begin()) return nullptr;
  const Kernel& k = std::prev(v)->second;
  return k.versions.until >= kNoUpperVersion || version <= k.versions.until ? &k : nullptr;
}

std::vector<VersionRange> KernelRegistry::version_ranges(const std::string& domain, const std::string& op_type) const {
  std::vector<VersionRange> ranges;
  auto it = kernels_.find(KernelKey{ir::canonical_domain(domain), op_type});
  if (it != kernels_.end())
    for (const auto& [since, kernel] : it->second) ranges.push_back(kernel.versions);
  return ranges;
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
    // Entries left open-ended end where the next one starts; adjacent ranges merge.
    std::vector<std::pair<int, int>> ranges;
    for (auto e = it->second.begin(); e != it->second.end(); ++e) {
      int until = e->second.versions.until;
      if (std::next(e) != it->second.end()) until = std::min(until, std::next(e)->first - 1);
      if (!ranges.empty() && ranges.back().second + 1 >= e->first) ranges.back().second = std::max(ranges.back().second, until);
      else ranges.emplace_back(e->first, until);
    }
    std::vector<std::string> text;
    for (auto [since, until] : ranges)
      text.push_back(until >= kNoUpperVersion ? fmt::format("{} and later", since) : fmt::format("{} to {}", since, until));
    return Status(Code::kUnsupported, fmt::format("no kernel for {}::{} at version {}: supported versions are {}", d,
                                                  op_type, version, fmt::join(text, ", ")));
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
