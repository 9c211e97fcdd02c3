// The one boundary between qonnx-cc and the ONNX library (checker, shape inference, version converter).
//
// What crosses it is the model's structure: initializers over a small size limit are handed over as
// typed graph inputs, never with their data, so multi-GB external-data models stay at bounded memory.
// The QONNX, nGraph and Ascend schemas are registered and domains used without an import get one.
// Every library call runs in a forked child with a time limit: a crash (SIGSEGV, abort) or a hang in
// the library on a malformed model becomes an error (exit 5) instead of taking the process down, and
// calls that assume a valid graph are preceded by the checker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "qonnx/ir/model.h"
#include "qonnx/support/status.h"

namespace onnx {
class ValueInfoProto;
}

namespace qonnx::onnxlib {

// Highest default-domain opset the installed ONNX library knows.
int64_t onnx_library_opset();

// ONNX's checker: graph structure, every node's inputs and attributes against its schema.
Status onnx_check(const ir::Model& model);

// The checker, then strict type and shape inference: any type or shape conflict is an error
// (kFailed, naming the node where the library says it).
Status onnx_check_types(const ir::Model& model);

// The checker, then shape inference. Returns the value_info the library inferred (all of it; the
// caller keeps what it lacks). A failure of inference itself is returned as kFailed.
Result<std::vector<std::unique_ptr<onnx::ValueInfoProto>>> onnx_infer_shapes(const ir::Model& model);

// The graph outputs' types as shape inference leaves them: a declared symbolic or unknown dim that
// inference knows becomes its value (as onnxruntime reports a session's outputs). Errors as
// onnx_infer_shapes.
Result<std::vector<std::unique_ptr<onnx::ValueInfoProto>>> onnx_infer_output_types(const ir::Model& model);

// onnx_infer_shapes, its answer merged into the main graph's value_info (for the infer-shapes pass, which
// sees no protobuf): a value without a declared type gets the inferred one; a value that is not a graph
// input or output and whose declared shape is not fully known gives way to an inferred fully known one.
// Returns how many value_infos were added; errors as onnx_infer_shapes.
Result<int> onnx_infer_shapes_into(ir::Model& model);

// Shape inference, then the version converter from the model's default-domain opset to `opset`.
// The result shares the model's initializers (weights are neither copied nor read).
Result<ir::Model> onnx_convert_version(const ir::Model& model, int64_t opset);

// Runs `work` in a forked child, which hands its bytes back through a pipe. A child killed by a
// signal or still running after `timeout_seconds` gives kInvalidModel naming `what`.
Result<std::string> run_isolated(const std::string& what, const std::function<Result<std::string>()>& work,
                                 int timeout_seconds);

}  // namespace qonnx::onnxlib
