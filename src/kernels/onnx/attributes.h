// Typed reads of a node's attributes for a kernel's plan-time prepare function: the fallback when
// the attribute is absent, its value when the node stores it with the type asked for (or with no
// type: old exporters leave it unset), else an InvalidModel error naming the attribute. INT and
// FLOAT are never converted into each other (ir::Node's attr_int / attr_float do that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::kernels {

Result<int64_t> int_attr(const ir::Node& node, const std::string& name, int64_t fallback);
Result<float> float_attr(const ir::Node& node, const std::string& name, float fallback);
Result<std::string> string_attr(const ir::Node& node, const std::string& name, const std::string& fallback);
Result<std::vector<int64_t>> ints_attr(const ir::Node& node, const std::string& name,
                                       const std::vector<int64_t>& fallback = {});

}  // namespace qonnx::kernels
