// ONNX OpSchemas for the QONNX domains, so the ONNX checker and shape inference work through
// quantized graphs. Registration is idempotent.
#pragma once

namespace qonnx::schemas {

void register_qonnx_schemas();

}  // namespace qonnx::schemas
