#include "kernels/onnx/attributes.h"

#include <fmt/format.h>

namespace qonnx::kernels {
namespace {

// onnx::AttributeProto::AttributeType numbers (this layer does not include the ONNX headers).
enum AttrType : int { kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kInts = 7 };

const char* type_name(int type) {
  switch (type) {
    case kFloat: return "a float";
    case kInt: return "an int";
    case kString: return "a string";
    case kInts: return "a list of ints";
    default: return "another kind of attribute";
  }
}

// Ok when `name` is absent, untyped or of type `want`.
Status check_type(const ir::Node& node, const std::string& name, int want) {
  const int type = node.attr_type(name);
  if (type == kUndefined || type == want) return Status::ok();
  return Status(Code::kInvalidModel,
                fmt::format("attribute '{}': must be {}, got {}", name, type_name(want), type_name(type)));
}

}  // namespace

Result<int64_t> int_attr(const ir::Node& node, const std::string& name, int64_t fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kInt));
  return node.attr_int(name, fallback);
}

Result<float> float_attr(const ir::Node& node, const std::string& name, float fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kFloat));
  return node.attr_float(name, fallback);
}

Result<std::string> string_attr(const ir::Node& node, const std::string& name, const std::string& fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kString));
  return node.attr_string(name, fallback);
}

Result<std::vector<int64_t>> ints_attr(const ir::Node& node, const std::string& name,
                                       const std::vector<int64_t>& fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kInts));
  return node.attr_ints(name, fallback);
}

}  // namespace qonnx::kernels
