#include "kernels/common/attr_check.h"

#include <fmt/format.h>

namespace qonnx::kernels {
namespace {

// onnx::AttributeProto::AttributeType numbers (the kernels layer does not see the ONNX headers).
enum AttrType : int { kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kFloats = 6, kInts = 7 };

const char* type_name(int type) {
  switch (type) {
    case kFloat: return "FLOAT";
    case kInt: return "INT";
    case kString: return "STRING";
    case 4: return "TENSOR";
    case 5: return "GRAPH";
    case kFloats: return "FLOATS";
    case kInts: return "INTS";
    case 8: return "STRINGS";
    default: return "another type";
  }
}

// Ok when `name` is absent or of type `want` (or untyped); else the error.
Status check_type(const ir::Node& node, const char* name, int want) {
  const int type = node.attr_type(name);
  if (type == kUndefined || type == want) return Status::ok();
  return Status(Code::kInvalidModel, fmt::format("attribute '{}' must be {}, got {}", name, type_name(want), type_name(type)));
}

}  // namespace

Result<int64_t> int_attr(const ir::Node& node, const char* name, int64_t fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kInt));
  return node.attr_int(name, fallback);
}

Result<bool> flag_attr(const ir::Node& node, const char* name, bool fallback) {
  QONNX_ASSIGN_OR_RETURN(const int64_t v, int_attr(node, name, fallback ? 1 : 0));
  return v != 0;
}

Result<float> float_attr(const ir::Node& node, const char* name, float fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kFloat));
  return node.attr_float(name, fallback);
}

Result<std::string> string_attr(const ir::Node& node, const char* name, const std::string& fallback) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kString));
  return node.attr_string(name, fallback);
}

Result<std::vector<int64_t>> ints_attr(const ir::Node& node, const char* name) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kInts));
  return node.attr_ints(name);
}

Result<std::vector<float>> floats_attr(const ir::Node& node, const char* name) {
  QONNX_RETURN_IF_ERROR(check_type(node, name, kFloats));
  return node.attr_floats(name);
}

Status check_one_of(const char* name, const std::string& value, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return Status::ok();
    list += list.empty() ? a : std::string(", ") + a;
  }
  return Status(Code::kInvalidModel, fmt::format("attribute '{}': '{}' is not one of {}", name, value, list));
}

}  // namespace qonnx::kernels
