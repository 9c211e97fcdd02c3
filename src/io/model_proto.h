// The IR from a parsed ModelProto (private to the io layer).
#pragma once

#include <filesystem>
#include <vector>

#include <onnx/onnx_pb.h>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace qonnx::io {

// Builds the model; `shared` initializers (from another model) join the graph by reference, their
// data neither copied nor read. Their names must not be defined in `proto`.
Result<ir::Model> model_from_proto(onnx::ModelProto proto, const std::filesystem::path& base_dir,
                                   const std::vector<const ir::Initializer*>& shared);

// The graph's structure for the ONNX library: initializers over `max_inline_bytes` keep their name,
// type and dims but no data (weights are not read, so multi-GB models fit).
Result<onnx::ModelProto> structure_proto(const ir::Model& model, size_t max_inline_bytes);

}  // namespace qonnx::io
