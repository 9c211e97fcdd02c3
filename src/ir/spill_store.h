// Large tensors made by passes go to a process-wide scratch file instead of memory, so converting a
// multi-GB model keeps about one tensor resident at a time. Private to the library.
#pragma once

#include <filesystem>

#include <onnx/onnx_pb.h>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {

// Tensors of at least this many bytes are spilled.
constexpr size_t kSpillThresholdBytes = size_t{16} << 20;

// Appends `tensor` to the scratch file and makes `proto` an external reference to it (location
// relative to the returned folder, which the initializer uses as its base_dir).
Result<std::filesystem::path> spill_tensor(const Tensor& tensor, onnx::TensorProto* proto);

}  // namespace qonnx::ir
