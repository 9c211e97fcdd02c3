// Plan-time checks of attribute values (kernels' Prepare functions): errors name the attribute.
#pragma once

#include <initializer_list>
#include <string>

#include "qonnx/support/status.h"

namespace qonnx::kernels {

// Ok when `value` is one of `allowed`; else "attribute 'name': 'value' is not one of a, b, c".
inline Status check_one_of(const char* name, const std::string& value, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return Status::ok();
    list += list.empty() ? a : std::string(", ") + a;
  }
  return Status(Code::kInvalidModel, "attribute '" + std::string(name) + "': '" + value + "' is not one of " + list);
}

}  // namespace qonnx::kernels
