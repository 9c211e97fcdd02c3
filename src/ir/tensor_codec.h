// TensorProto <-> Tensor at the protobuf edge (private to the library).
#pragma once

#include <filesystem>

#include <onnx/onnx_pb.h>

#include "qonnx/support/status.h"
#include "qonnx/tensor.h"

namespace qonnx::ir {

// Location of a tensor's external data, validated: inside `base_dir`, within the file.
struct ExternalSlice {
  std::filesystem::path file;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Validates a TensorProto's external_data entries against `base_dir` and the expected byte size.
Result<ExternalSlice> resolve_external(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// Decodes any encoding (raw_data, typed fields, external data) into a Tensor.
Result<Tensor> decode_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

// Encodes as raw_data (strings in string_data); name is set by the caller.
void encode_tensor(const Tensor& tensor, onnx::TensorProto* proto);

}  // namespace qonnx::ir
