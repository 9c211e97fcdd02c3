// Models in ONNX's textual syntax (onnx/defs/parser.h and printer.h): --print-ir-after and the golden
// pass tests read and write it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::io {

// Parses a model written as `<ir_version: 8, opset_import: ["" : 13]> name (inputs) => (outputs)
// <initializers> { nodes }`; a syntax error is an invalid model naming the parser's message.
Result<ir::Model> load_model_from_text(const std::string& text, const std::filesystem::path& base_dir);

// The model as text: a header line with ir_version and opset imports, then the graph. Initializers with
// at most `max_inline_elements` elements keep their values; larger ones show only type and dims.
std::string to_onnx_text(const ir::Model& model, int64_t max_inline_elements = 0);

}  // namespace qonnx::io
