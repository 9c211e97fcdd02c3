// What every command does with the caller's name for its input.
#pragma once

#include <string>

#include "qonnx/support/status.h"

namespace qonnx::api {

// `status` with `input_name` as its outermost context item ("m.onnx: [cleanup] ..."); unchanged when
// the caller named no input (a model built in memory).
inline Status with_input(Status status, const std::string& input_name) {
  if (input_name.empty()) return status;
  return std::move(status).with_context(input_name);
}

}  // namespace qonnx::api
