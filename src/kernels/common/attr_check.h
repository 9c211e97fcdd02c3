// Plan-time reading and checking of attributes (kernels' Prepare functions), thin wrappers over
// ir::Node::attr<T> (include/qonnx/ir/model.h): no INT <-> FLOAT
// coercion, and every error names the attribute.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::kernels {

// The attribute's value, `fallback` when absent; an error when it has another type (an attribute
// without a type, as some old exporters wrote, is read as the wanted one).
Result<int64_t> int_attr(const ir::Node& node, const char* name, int64_t fallback);
Result<float> float_attr(const ir::Node& node, const char* name, float fallback);
Result<std::string> string_attr(const ir::Node& node, const char* name, const std::string& fallback);
// An INT attribute used as a flag: non-zero is true.
Result<bool> flag_attr(const ir::Node& node, const char* name, bool fallback);
// Empty when absent.
Result<std::vector<int64_t>> ints_attr(const ir::Node& node, const char* name);
Result<std::vector<float>> floats_attr(const ir::Node& node, const char* name);

// Ok when `value` is one of `allowed`; else "attribute 'name': 'value' is not one of a, b, c".
Status check_one_of(const char* name, const std::string& value, std::initializer_list<const char*> allowed);

}  // namespace qonnx::kernels
