// qonnx-cc's own rows for the default-domain ops whose type constraints opsets 18..21 widened, above
// the installed ONNX library (1.12: schemas up to opset 17). The check above 17 takes the op's newest
// library schema and allows, per formal parameter, the types these rows add (docs/opset18-21.md).
#pragma once

#include <cstdint>
#include <string>

#include "qonnx/tensor.h"

namespace qonnx::schemas {

// Whether opset `version` allows `dtype` for formal parameter `formal` of default-domain `op` through
// a widening of opsets 18..21 (the library's schema decides the rest).
bool widened_type_allows(const std::string& op, int64_t version, const std::string& formal, DType dtype);

// Whether the installed ONNX library has a name for `dtype` (float8 and int4 came after ONNX 1.12).
bool library_knows_type(DType dtype);

}  // namespace qonnx::schemas
