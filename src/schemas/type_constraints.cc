// ONNX type constraints as a standard runtime enforces them: every input and output element type in
// its schema's allowed set, and one type per type parameter (Div(float, double) is an error).
#include "qonnx/schemas/schemas.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>

#include "schemas/opset18_21_types.h"

namespace qonnx::schemas {
namespace {

// The library's interned type string of a tensor of `dtype` (one it knows: library_knows_type). Built
// once: the lookup formats and hashes a string, and every kernel run checks its types.
onnx::DataType type_of(DType dtype) {
  static const std::array<onnx::DataType, 64> table = [] {
    std::array<onnx::DataType, 64> types{};
    for (int d = 0; d < static_cast<int>(types.size()); ++d) {
      if (!library_knows_type(static_cast<DType>(d))) continue;
      onnx::TypeProto t;
      t.mutable_tensor_type()->set_elem_type(d);
      types[static_cast<size_t>(d)] = onnx::Utils::DataTypeUtils::ToType(t);
    }
    return types;
  }();
  return table[static_cast<size_t>(dtype)];
}

// The library's type string of a sequence or optional value; nullptr when its element type is not
// known (an empty container read from a file) or not one the library has.
onnx::DataType container_type_of(const Tensor& value) {
  if (value.dtype() == DType::kUndefined || !library_knows_type(value.dtype())) return nullptr;
  onnx::TypeProto tensor;
  tensor.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(value.dtype()));
  onnx::TypeProto t;
  if (value.is_sequence()) {
    *t.mutable_sequence_type()->mutable_elem_type() = tensor;
  } else if (value.optional_of_sequence()) {
    *t.mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()->mutable_elem_type() = tensor;
  } else {
    *t.mutable_optional_type()->mutable_elem_type() = tensor;
  }
  return onnx::Utils::DataTypeUtils::ToType(t);
}

// The newest version the installed ONNX library has schemas for, per domain (0: unknown domain).
int64_t newest_known_version(const std::string& domain) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(domain);
  return it == ranges.end() ? 0 : it->second.second;
}

std::string allowed_list(const onnx::DataTypeSet& types) {
  std::vector<std::string> names(types.size());
  std::transform(types.begin(), types.end(), names.begin(), [](onnx::DataType t) { return *t; });
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

// One actual input or output of the node, checked against its formal parameter.
struct Actual {
  bool is_output;
  size_t index;
  const onnx::OpSchema::FormalParameter* formal;
  DType dtype;
  const Tensor* value = nullptr;  // set for a sequence or optional value
  bool same_type(const Actual& o) const {
    if (!value || !o.value) return !value && !o.value && dtype == o.dtype;
    return dtype == o.dtype && value->kind() == o.value->kind() && value->optional_of_sequence() == o.value->optional_of_sequence();
  }
  std::string type_name() const { return value ? value->type_string() : dtype_name(dtype); }
};

// "input #1 'B' (B)", for messages only (built when a check fails: the checks run on every kernel run).
std::string describe(const ir::Node& node, const Actual& a) {
  const ir::Value* v = a.is_output ? (a.index < node.outputs().size() ? node.output(a.index) : nullptr)
                                   : (a.index < node.inputs().size() ? node.input(a.index) : nullptr);
  return fmt::format("{} #{} '{}' ({})", a.is_output ? "output" : "input", a.index, v ? v->name() : std::string(),
                     a.formal->GetName());
}

// Type parameter -> the first actual bound to it (few per op: a vector).
using Bindings = std::vector<std::pair<const std::string*, Actual>>;

// Checks one actual tensor against its formal parameter at opset `version`, and binds the formal's
// type parameter to its type.
Status check_one(const onnx::OpSchema& schema, int64_t version, const ir::Node& node, const Actual& actual, bool bind,
                 Bindings& bound) {
  const onnx::OpSchema::FormalParameter& p = *actual.formal;
  const DType dtype = actual.dtype;
  const std::string& param = p.GetTypeStr();
  const auto& params = schema.typeConstraintParams();
  const bool is_type_parameter = std::any_of(params.begin(), params.end(), [&](const auto& c) { return c.type_param_str == param; });
  bool allowed;
  if (actual.value) {
    const onnx::DataType type = container_type_of(*actual.value);
    if (!type) return Status::ok();  // element type unknown: nothing to check
    allowed = p.GetTypes().count(type) != 0;
  } else {
    // The widenings (string compares) only when the schema's own types say no: this runs on every kernel run.
    allowed = (library_knows_type(dtype) && p.GetTypes().count(type_of(dtype)) != 0) ||
              (version > schema.SinceVersion() && widened_type_allows(schema.Name(), version, p.GetName(), dtype));
  }
  if (!allowed) {
    const std::string where = describe(node, actual);
    const std::string constraint = is_type_parameter ? fmt::format("type parameter {}", param) : param;
    const std::string at = version > newest_known_version(schema.domain())
                               ? fmt::format("v{}, with the types opsets up to {} add", schema.SinceVersion(), version)
                               : fmt::format("v{}", schema.SinceVersion());
    return Status(Code::kInvalidModel, fmt::format("{} is {}, which {} {} ({}) does not allow ({}: {})", where,
                                                   actual.type_name(), schema.Name(), constraint, at, param,
                                                   allowed_list(p.GetTypes())))
        .with_context(node.describe());
  }
  if (!bind || !is_type_parameter) return Status::ok();
  auto it = std::find_if(bound.begin(), bound.end(), [&](const auto& b) { return *b.first == param; });
  if (it == bound.end()) {
    bound.emplace_back(&param, actual);
    return Status::ok();
  }
  if (it->second.same_type(actual)) return Status::ok();
  return Status(Code::kInvalidModel,
                fmt::format("{} is {} but {} is {}: {} binds both to its type parameter {}, which must be one type",
                            describe(node, actual), actual.type_name(), describe(node, it->second),
                            it->second.type_name(), schema.Name(), param))
      .with_context(node.describe());
}

// Formal parameter for actual position i (the last one repeats when variadic); nullptr past the end.
const onnx::OpSchema::FormalParameter* formal_at(const std::vector<onnx::OpSchema::FormalParameter>& formals, size_t i) {
  if (i < formals.size()) return &formals[i];
  if (!formals.empty() && formals.back().GetOption() == onnx::OpSchema::Variadic) return &formals.back();
  return nullptr;
}

bool binds(const std::vector<onnx::OpSchema::FormalParameter>& formals, size_t i) {
  // A heterogeneous variadic parameter lets each of its actuals have its own type.
  return !(i + 1 >= formals.size() && !formals.empty() && formals.back().GetOption() == onnx::OpSchema::Variadic &&
           !formals.back().GetIsHomogeneous());
}

// The schema whose constraints apply to `node` at `version` (ONNX's own for the default domain; above
// the newest opset the installed library knows, its newest schema of the op with the widenings of
// opset18_21_types.h; QONNX, nGraph and Ascend ones from this layer); nullptr when none is known,
// then nothing is checked.
const onnx::OpSchema* constraint_schema(const ir::Node& node, int64_t version) {
  register_qonnx_schemas();
  const std::string domain = ir::is_default_domain(node.domain()) ? std::string() : node.domain();
  const int64_t known = newest_known_version(domain);
  if (version > known) {
    if (!domain.empty()) return nullptr;  // a custom domain's later versions: trust the kernels
    version = known;
  }
  return onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(version), domain);
}

Status check_type_constraints_of(const onnx::OpSchema& schema, int64_t version, const ir::Node& node,
                              const std::vector<const Tensor*>& inputs, const std::vector<Tensor>* outputs) {
  Bindings bound;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* p = formal_at(schema.inputs(), i);
    if (!p || !inputs[i] || !inputs[i]->defined()) continue;
    const Tensor* container = inputs[i]->is_tensor() ? nullptr : inputs[i];
    QONNX_RETURN_IF_ERROR(check_one(schema, version, node, Actual{false, i, p, inputs[i]->dtype(), container},
                                    binds(schema.inputs(), i), bound));
  }
  // Old exports give Constant-1 (float types only) int64 values that every runtime accepts: outputs of
  // nodes without inputs are not checked.
  if (!outputs || node.inputs().empty()) return Status::ok();
  for (size_t k = 0; k < outputs->size(); ++k) {
    const auto* p = formal_at(schema.outputs(), k);
    if (!p || !(*outputs)[k].defined()) continue;
    const Tensor* container = (*outputs)[k].is_tensor() ? nullptr : &(*outputs)[k];
    QONNX_RETURN_IF_ERROR(check_one(schema, version, node, Actual{true, k, p, (*outputs)[k].dtype(), container},
                                    binds(schema.outputs(), k), bound));
  }
  return Status::ok();
}

}  // namespace

namespace {

// The dtypes a check sees as one number: 6 bits per input (0: absent, else dtype + 1), then with outputs a
// marker and 6 bits per output; 0 when they do not fit or a value is not a tensor. The check of a node is a
// function of these alone, so a signature that passed once passes again.
uint64_t dtype_signature(const std::vector<const Tensor*>& inputs, const std::vector<Tensor>* outputs) {
  constexpr uint64_t kOutputsMarker = 63;  // above every dtype + 1
  uint64_t sig = 1;                        // the leading 1 keeps signatures of different lengths apart
  const auto add = [&sig](uint64_t code) {
    if (sig >> 57) return false;
    sig = sig << 6 | code;
    return true;
  };
  const auto add_value = [&add](const Tensor* t) {
    if (!t || !t->defined()) return add(0);
    const uint64_t code = static_cast<uint64_t>(t->dtype()) + 1;
    return t->is_tensor() && code < kOutputsMarker && add(code);
  };
  for (const Tensor* t : inputs)
    if (!add_value(t)) return 0;
  if (!outputs) return sig;
  if (!add(kOutputsMarker)) return 0;
  for (const Tensor& t : *outputs)
    if (!add_value(&t)) return 0;
  return sig;
}

}  // namespace

exec::TypeCheck type_check_for(const ir::Node& node, int64_t version) {
  const onnx::OpSchema* schema = constraint_schema(node, version);
  if (!schema) return exec::TypeCheck();
  // A plan's step runs its check twice per run with the same dtypes run after run: the last signature that
  // passed, per form of the check (inputs only, inputs and outputs), is not checked again. Concurrent runs
  // may overwrite it with another signature that passed.
  auto passed = std::make_shared<std::array<std::atomic<uint64_t>, 2>>();
  return [schema, version, &node, passed](const std::vector<const Tensor*>& inputs, const std::vector<Tensor>* outputs) {
    const uint64_t sig = dtype_signature(inputs, outputs);
    std::atomic<uint64_t>& last = (*passed)[outputs ? 1 : 0];
    if (sig != 0 && last.load(std::memory_order_relaxed) == sig) return Status::ok();
    Status st = check_type_constraints_of(*schema, version, node, inputs, outputs);
    if (st.is_ok() && sig != 0) last.store(sig, std::memory_order_relaxed);
    return st;
  };
}

}  // namespace qonnx::schemas
