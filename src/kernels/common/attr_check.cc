#include "kernels/common/attr_check.h"

#include <fmt/format.h>

namespace qonnx::kernels {

// Thin wrappers over ir::Node::attr<T>, which holds the rules and the messages.

Result<int64_t> int_attr(const ir::Node& node, const char* name, int64_t fallback) {
  return node.attr<int64_t>(name, fallback);
}

Result<bool> flag_attr(const ir::Node& node, const char* name, bool fallback) {
  return node.attr<bool>(name, fallback);
}

Result<float> float_attr(const ir::Node& node, const char* name, float fallback) {
  return node.attr<float>(name, fallback);
}

Result<std::string> string_attr(const ir::Node& node, const char* name, const std::string& fallback) {
  return node.attr<std::string>(name, fallback);
}

Result<std::vector<int64_t>> ints_attr(const ir::Node& node, const char* name) {
  return node.attr<std::vector<int64_t>>(name, {});
}

Result<std::vector<float>> floats_attr(const ir::Node& node, const char* name) {
  return node.attr<std::vector<float>>(name, {});
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
